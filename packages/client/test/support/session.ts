import {
  CPPClient,
  type CPPClientOptions,
  type GenerationResult,
  type PromptOptions,
  type ThreadGraph,
} from '@promethea/cpp-client';
import { afterEach, beforeEach } from 'vitest';
import { FakeServer } from './fake-server.js';

export const DID = 'did:key:z6MkTestClientAlice';

/** A fresh fake server per test, and clients connected to it that are closed after the test. */
export function useFakeSession() {
  let server: FakeServer | undefined;
  const clients: CPPClient[] = [];
  beforeEach(async () => {
    server = await FakeServer.start();
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await server?.close();
  });
  return {
    get server(): FakeServer {
      if (!server) throw new Error('no fake server outside a test');
      return server;
    },
    connect(options: Partial<CPPClientOptions> = {}): CPPClient {
      const client = new CPPClient({ endpoint: this.server.url, did: DID, ...options });
      clients.push(client);
      return client;
    },
    /** Sends a prompt and waits until the client's mirror holds the streaming assistant node the server created. */
    async startPrompt(client: CPPClient, options: Partial<PromptOptions> = {}): Promise<StartedPrompt> {
      const count = this.server.framesOf('CPP_PROMPT').length + 1;
      const result = client.prompt({ userPrompt: 'Explain spiking neural networks.', ...options });
      // A test that leaves the prompt unsettled is not interested in its rejection when the client closes.
      result.catch(() => undefined);
      const frame = await this.server.frame('CPP_PROMPT', count);
      const threadId = frame.payload.activeThreadId;
      const assistantNodeId = this.server.streaming(threadId);
      await mirrorUntil(client, threadId, (graph) => graph.nodes[assistantNodeId] !== undefined);
      return { result, threadId, userNodeId: frame.payload.newNodeId, assistantNodeId };
    },
  };
}

export interface StartedPrompt {
  result: Promise<GenerationResult>;
  threadId: string;
  userNodeId: string;
  assistantNodeId: string;
}

/** Resolves with the client's mirror of the thread once `test` holds for it (checked now and after each change). */
export function mirrorUntil(
  client: CPPClient,
  threadId: string,
  test: (graph: ThreadGraph) => boolean,
): Promise<ThreadGraph> {
  return new Promise((resolve) => {
    const check = () => {
      const graph = client.graph(threadId);
      if (!graph || !test(graph)) return;
      client.off('graph', check);
      resolve(graph);
    };
    client.on('graph', check);
    check();
  });
}

/** The text of a node in the client's mirror. */
export function contentOf(client: CPPClient, threadId: string, nodeId: string): string | undefined {
  return client.graph(threadId)?.nodes[nodeId]?.content;
}
