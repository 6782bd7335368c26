import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { CPPServer, DemoProvider, type ModelEntry } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  expectError,
  openThread,
  pivot,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** Two models that say who they are, the second one reasoning. */
function twoModels(): { fast: ScriptedModel; deep: ScriptedModel; models: ModelEntry[] } {
  const fast = new ScriptedModel({ chunks: ['fast answer'] }, { gated: false });
  const deep = new ScriptedModel({ chunks: ['deep', ' answer'] });
  return {
    fast,
    deep,
    models: [
      { id: 'fast', label: 'Fast model', provider: fast },
      { id: 'deep', label: 'Deep thinker', provider: deep, reasoning: true },
    ],
  };
}

/** A server of the two models, a client, and a thread where the deep model has streamed its first chunk. */
async function deepAnswerStreaming() {
  const models = twoModels();
  await fixture.start({ models: models.models });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  const asked = await prompt(client, threadId, 'Think hard', { model: 'deep' });
  (await models.deep.call(0)).release();
  await chunksReceived(client, asked.assistantNodeId, 1);
  return { ...models, client, threadId, asked };
}

describe('several models, chosen per prompt', () => {
  it('lists the models with their labels, providers, reasoning and the default', async () => {
    await fixture.start({ models: twoModels().models, defaultModel: 'deep' });
    const client = await fixture.connect();
    client.send('CPP_MODEL_LIST', {}, { id: 'models-1' });
    expect((await client.next('CPP_MODELS')).payload).toEqual({
      models: [
        { id: 'fast', label: 'Fast model', provider: 'scripted', reasoning: false },
        { id: 'deep', label: 'Deep thinker', provider: 'scripted', reasoning: true },
      ],
      defaultModel: 'deep',
    });
  });

  it('lists a server of one model under its model name', async () => {
    await fixture.start({ model: new DemoProvider({ delayMs: 0 }) });
    const client = await fixture.connect();
    client.send('CPP_MODEL_LIST', {});
    expect((await client.next('CPP_MODELS')).payload).toEqual({
      models: [{ id: 'cpp-demo', label: 'cpp-demo', provider: 'demo', reasoning: false, contextWindow: 2048 }],
      defaultModel: 'cpp-demo',
    });
  });

  it('answers each prompt with the model it names, recorded on the answer, and the default without one', async () => {
    const { fast, deep, models } = twoModels();
    await fixture.start({ models });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const first = await prompt(client, threadId, 'Think hard', { model: 'deep' });
    expect(first.update.nodes[first.assistantNodeId]).toMatchObject({ model: 'deep', status: 'streaming' });
    (await deep.call(0)).releaseAll();
    await completion(client, threadId, first.assistantNodeId);
    const second = await prompt(client, threadId, 'Quickly now');
    expect(second.update.nodes[second.assistantNodeId]).toMatchObject({ model: 'fast' });
    await completion(client, threadId, second.assistantNodeId);
    const sync = await requestSync(client, threadId);
    expect(sync.nodes[first.assistantNodeId]).toMatchObject({ content: 'deep answer', model: 'deep' });
    expect(sync.nodes[second.assistantNodeId]).toMatchObject({ content: 'fast answer', model: 'fast' });
    expect([fast.calls.length, deep.calls.length]).toEqual([1, 1]);
  });

  it('answers a pivot with the model it names', async () => {
    const { fast, client, threadId, asked } = await deepAnswerStreaming();
    const pivoted = await pivot(client, threadId, asked.assistantNodeId, 'No, quickly', {
      model: 'fast',
      receivedContentLength: 4,
    });
    expect(pivoted.update.nodes[pivoted.assistantNodeId]).toMatchObject({ model: 'fast' });
    await completion(client, threadId, pivoted.assistantNodeId);
    expect(fast.calls).toHaveLength(1);
  });

  it('refuses CPP_PROMPT naming a model the server does not offer, changing nothing', async () => {
    await fixture.start({ models: twoModels().models });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const newNodeId = newMessageId();
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'Hi', newNodeId, model: 'gpt-9' },
      { id: 'refused-1' },
    );
    const error = await expectError(client, ErrorCode.UNKNOWN_MODEL, { refId: 'refused-1', refType: 'CPP_PROMPT' });
    expect(error.message).toContain('gpt-9');
    expect(await requestSync(client, threadId)).toMatchObject({ version: 0, nodes: {} });
  });

  it('refuses CPP_PIVOT_INIT naming a model the server does not offer, leaving the stream running', async () => {
    const { deep, client, threadId, asked } = await deepAnswerStreaming();
    const before = await requestSync(client, threadId);
    const newBranchNodeId = newMessageId();
    client.send(
      'CPP_PIVOT_INIT',
      {
        activeThreadId: threadId,
        interruptedNodeId: asked.assistantNodeId,
        userPrompt: 'Hi',
        newBranchNodeId,
        model: 'gpt-9',
      },
      { id: 'refused-1' },
    );
    await expectError(client, ErrorCode.UNKNOWN_MODEL, { refId: 'refused-1', refType: 'CPP_PIVOT_INIT' });
    const after = await requestSync(client, threadId);
    expect(after.version).toBe(before.version);
    expect(after.nodes[newBranchNodeId]).toBeUndefined();
    expect(after.nodes[asked.assistantNodeId]?.status).toBe('streaming');
    expect(deep.calls[0]?.signal.aborted).toBe(false);
  });

  it('refuses a configuration it cannot serve', () => {
    const { models } = twoModels();
    expect(() => new CPPServer({ port: 0, models: [] })).toThrow(/at least one model/);
    expect(() => new CPPServer({ port: 0, models, defaultModel: 'other' })).toThrow(/default model "other"/);
    expect(() => new CPPServer({ port: 0, models: [models[0]!, models[0]!] })).toThrow(/Two models have the id "fast"/);
    expect(() => new CPPServer({ port: 0, models, model: new DemoProvider() })).toThrow(/not both/);
  });
});
