import { CPPClient } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID } from '../support/session.js';

// Several models answering one prompt side by side (PROTOCOL.md §30), through CPPClient against a real server.

describe('CPPClient: several models answering one prompt', () => {
  let server: CPPServer | undefined;
  let client: CPPClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  /** Demo models told apart by their answers' length; `long` and `longer` stream for as long as any test runs. */
  async function threeModels(): Promise<CPPClient> {
    const endless = () => new DemoProvider({ delayMs: 5, words: 100_000 });
    server = await startServer({
      models: [
        { id: 'short', label: 'Short', provider: new DemoProvider({ delayMs: 0, words: 5 }) },
        { id: 'medium', label: 'Medium', provider: new DemoProvider({ delayMs: 0, words: 9 }) },
        { id: 'long', label: 'Long', provider: endless() },
        { id: 'longer', label: 'Longer', provider: endless() },
      ],
    });
    client = new CPPClient({ endpoint: server.url, did: DID });
    return client;
  }

  /** Resolves once the client's mirror shows `count` answers streaming, each with some text. */
  function streaming(cpp: CPPClient, count: number): Promise<void> {
    const shown = () => {
      const nodes = cpp.streamingNodes();
      return nodes.length === count && nodes.every((node) => node.content.length >= 10);
    };
    return new Promise((resolve) => {
      if (shown()) return resolve();
      const listener = () => {
        if (!shown()) return;
        cpp.off('graph', listener);
        resolve();
      };
      cpp.on('graph', listener);
    });
  }

  it('settles a prompt with every model answer once all have ended, in the order named; the head is the first', async () => {
    const cpp = await threeModels();
    const deltas: string[] = [];
    const result = await cpp.prompt({
      userPrompt: 'Both of you',
      models: ['medium', 'short'],
      onStream: (delta) => deltas.push(delta),
    });
    expect(result.answers?.map(({ model, status, content }) => [model, status, content.split(' ').length])).toEqual([
      ['medium', 'completed', 9],
      ['short', 'completed', 5],
    ]);
    expect(result.assistantNodeId).toBe(result.answers?.[0]?.assistantNodeId);
    expect(deltas.join('')).toBe(result.content);
    const graph = cpp.graph(result.threadId);
    expect(graph?.nodes[result.userNodeId]?.childrenIds).toEqual(result.answers?.map((a) => a.assistantNodeId));
    expect(graph?.activeHeadMessageId).toBe(result.assistantNodeId);
    // The person picks the second to go on from: the next prompt hangs under it.
    await cpp.anchor(result.answers![1]!.assistantNodeId);
    const next = await cpp.prompt({ userPrompt: 'Go on', model: 'short' });
    expect(cpp.graph()?.nodes[next.userNodeId]?.parentId).toBe(result.answers![1]!.assistantNodeId);
  });

  it('stops one answer of several by its id, and every one without it, each where the client holds it', async () => {
    const cpp = await threeModels();
    const pending = cpp.prompt({ userPrompt: 'Both of you', models: ['long', 'longer'] });
    await streaming(cpp, 2);
    const [long, longer] = cpp.streamingNodes();
    await cpp.stop({ nodeId: long!.id });
    expect(cpp.streamingNodes().map((node) => node.id)).toEqual([longer!.id]);
    const heldOfLonger = cpp.graph()!.nodes[longer!.id]!.content.length;
    await cpp.stop();
    expect(cpp.streamingNodes()).toEqual([]);
    const result = await pending;
    expect(result.answers?.map((answer) => [answer.model, answer.status])).toEqual([
      ['long', 'interrupted'],
      ['longer', 'interrupted'],
    ]);
    expect(result.answers?.[1]?.content.length).toBeGreaterThanOrEqual(heldOfLonger);
  });

  it('pivots from answers side by side: all halt, the new prompt hangs under the one streaming first', async () => {
    const cpp = await threeModels();
    const first = cpp.prompt({ userPrompt: 'Long, both', models: ['long', 'longer'] });
    await streaming(cpp, 2);
    const [long] = cpp.streamingNodes();
    const pivoted = await cpp.pivot({ userPrompt: 'Now short ones', models: ['short', 'medium'] });
    expect((await first).answers?.map((answer) => answer.status)).toEqual(['interrupted', 'interrupted']);
    const graph = cpp.graph()!;
    expect(graph.nodes[pivoted.userNodeId]?.parentId).toBe(long!.id);
    expect(pivoted.answers?.map((answer) => [answer.model, answer.status])).toEqual([
      ['short', 'completed'],
      ['medium', 'completed'],
    ]);
  });
});
