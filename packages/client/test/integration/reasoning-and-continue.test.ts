import { CPPClient } from '@promethea/cpp-client';
import { DemoProvider, demoModels, type CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { mirrorUntil, DID } from '../support/session.js';

describe('CPPClient: reasoning and continue against the real CPPServer', () => {
  let server: CPPServer | undefined;
  let client: CPPClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it("assembles a reasoning model's reasoning on its node mirror, apart from the answer, and reports it", async () => {
    server = await startServer({ models: demoModels({ delayMs: 0 }) });
    client = new CPPClient({ endpoint: server.url, did: DID });
    const reasoned: string[] = [];
    const answered: string[] = [];

    const result = await client.prompt({
      userPrompt: 'Why trees?',
      model: 'demo-reasoning',
      onReasoning: (delta) => reasoned.push(delta),
      onStream: (delta) => answered.push(delta),
    });

    const node = client.graph()!.nodes[result.assistantNodeId]!;
    expect(result.reasoning).toMatch(/^The question is about "Why trees\?"\./);
    expect(node.reasoning).toBe(result.reasoning);
    expect(reasoned.join('')).toBe(result.reasoning);
    expect(answered.join('')).toBe(result.content);
    expect(result.content).not.toContain('The question is about');
    expect((await client.listModels()).models.find((model) => model.id === 'demo-reasoning')).toMatchObject({
      reasoning: true,
    });
  });

  it('pivots while the model reasons: the node keeps the reasoning the user had seen and no answer', async () => {
    server = await startServer({ models: [{ provider: new DemoProvider({ delayMs: 5, reasoningWords: 100_000 }) }] });
    client = new CPPClient({ endpoint: server.url, did: DID });
    const { threadId } = await client.openThread();
    const first = client.prompt({ userPrompt: 'Think' });
    await mirrorUntil(client, threadId, () => (client!.streamingNode()?.reasoning?.length ?? 0) > 20);

    const second = client.pivot({ userPrompt: 'Stop thinking', receivedReasoningLength: 12 });
    const halted = await first;
    expect(halted).toMatchObject({ status: 'interrupted', content: '' });
    expect(halted.reasoning).toHaveLength(12);
    await client.stop();
    await second;
  });

  it('continues a stopped answer in the same node: onStream gets what follows, the result the whole text', async () => {
    server = await startServer({ model: new DemoProvider({ delayMs: 2, words: 60 }) });
    client = new CPPClient({ endpoint: server.url, did: DID });
    const { threadId } = await client.openThread();
    const whole = (await client.prompt({ userPrompt: 'Explain pivots' })).content;
    const second = client.regenerate();
    await mirrorUntil(client, threadId, () => (client!.streamingNode()?.content.length ?? 0) > 30);
    await client.stop();
    const stopped = await second;
    expect(stopped.status).toBe('interrupted');
    const deltas: string[] = [];

    const continued = await client.continue({
      expectedVersion: client.graph()!.version,
      onStream: (delta) => deltas.push(delta),
    });

    expect(continued).toMatchObject({ assistantNodeId: stopped.assistantNodeId, status: 'completed' });
    expect(stopped.content + deltas.join('')).toBe(continued.content);
    expect(continued.content).toBe(whole);
    await expect(client.continue({ nodeId: stopped.assistantNodeId })).rejects.toMatchObject({ code: 'INVALID_NODE' });
  });
});
