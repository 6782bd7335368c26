import { CPPClient } from '@promethea/cpp-client';
import { newThreadId } from '@promethea/cpp-protocol';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../server/test/support/start-server.js';
import { CPPChatTransport } from '../src/index.js';

/** The transport's requests as useChat makes them, its streams read to their end, against a server of two models. */
describe('CPPChatTransport on a server with several models', () => {
  let server: CPPServer | undefined;
  let client: CPPClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  async function connect(): Promise<CPPClient> {
    server = await startServer({
      models: [
        { id: 'fast', provider: new DemoProvider({ delayMs: 0, words: 3 }) },
        { id: 'deep', provider: new DemoProvider({ delayMs: 0, words: 5 }) },
      ],
      defaultModel: 'fast',
    });
    client = new CPPClient({ endpoint: server.url, reconnect: false });
    return client;
  }

  /** Sends `text` (or regenerates) as useChat would, reads the answer's stream, and returns the answer's node id. */
  async function request(
    transport: CPPChatTransport,
    chatId: string,
    body: object | undefined,
    trigger: 'submit-message' | 'regenerate-message' = 'submit-message',
  ): Promise<string> {
    const messages: UIMessage[] = [
      { id: `user-${trigger}`, role: 'user', parts: [{ type: 'text', text: 'Which model are you?' }] },
    ];
    const stream = await transport.sendMessages({
      chatId,
      messages,
      trigger,
      messageId: undefined,
      abortSignal: undefined,
      body,
    });
    const chunks: UIMessageChunk[] = [];
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    const start = chunks.find((chunk) => chunk.type === 'start');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    return (start as { messageId: string }).messageId;
  }

  it("answers with the transport's model, and with the one a request's body names", async () => {
    const client = await connect();
    const threadId = newThreadId();
    const modelOf = (nodeId: string) => client.graph(threadId)!.nodes[nodeId]!.model;

    expect(modelOf(await request(new CPPChatTransport({ client }), threadId, undefined))).toBe('fast');
    const transport = new CPPChatTransport({ client, model: 'deep' });
    expect(modelOf(await request(transport, threadId, undefined))).toBe('deep');
    expect(modelOf(await request(transport, threadId, { model: 'fast' }))).toBe('fast');
    expect(modelOf(await request(transport, threadId, { model: 'deep' }, 'regenerate-message'))).toBe('deep');
  });

  it('refuses a body whose model is not a model id', async () => {
    const client = await connect();
    const transport = new CPPChatTransport({ client });
    await expect(request(transport, newThreadId(), { model: 42 })).rejects.toThrow(
      'body.model must be a model id (a string), not 42',
    );
  });
});
