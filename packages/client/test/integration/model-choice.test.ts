import { CPPClient } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID } from '../support/session.js';

describe('CPPClient: choosing a model', () => {
  let server: CPPServer | undefined;
  let client: CPPClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it('lists the server models and answers a prompt, a pivot and an edit with the one it names', async () => {
    server = await startServer({
      models: [
        { id: 'short', label: 'Short answers', provider: new DemoProvider({ delayMs: 0, words: 5 }) },
        { id: 'long', label: 'Long answers', provider: new DemoProvider({ delayMs: 0, words: 9 }) },
      ],
    });
    client = new CPPClient({ endpoint: server.url, did: DID });
    expect(await client.listModels()).toEqual({
      models: [
        { id: 'short', label: 'Short answers', provider: 'demo', reasoning: false, contextWindow: 2048 },
        { id: 'long', label: 'Long answers', provider: 'demo', reasoning: false, contextWindow: 2048 },
      ],
      defaultModel: 'short',
    });
    const chosen = await client.prompt({ userPrompt: 'Hello', model: 'long' });
    expect(chosen.content.split(' ')).toHaveLength(9);
    const byDefault = await client.pivot({ userPrompt: 'Again' });
    expect(byDefault.content.split(' ')).toHaveLength(5);
    const graph = client.graph(chosen.threadId);
    expect([graph?.nodes[chosen.assistantNodeId]?.model, graph?.nodes[byDefault.assistantNodeId]?.model]).toEqual([
      'long',
      'short',
    ]);
    const edited = await client.edit({ nodeId: byDefault.userNodeId, userPrompt: 'Again, at length', model: 'long' });
    expect(edited.content.split(' ')).toHaveLength(9);
    expect(client.graph(edited.threadId)?.nodes[edited.assistantNodeId]?.model).toBe('long');
  });
});
