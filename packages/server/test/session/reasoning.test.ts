import { MemoryStore, type ModelProvider, type ModelStreamPart } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  chunksOf,
  chunksReceived,
  completion,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** A model that reasons before, between and after the text of its answer. */
const reasoningModel: ModelProvider = {
  provider: 'scripted',
  model: 'reasoner',
  reasoning: true,
  async *stream(): AsyncGenerator<ModelStreamPart> {
    yield { type: 'reasoning-delta', text: 'The user greets me. ' };
    yield { type: 'text-delta', text: 'Hello' };
    yield { type: 'reasoning-delta', text: 'Add a question?' };
    yield { type: 'text-delta', text: ' there!' };
    yield { type: 'reasoning-delta', text: ' No.' };
    yield { type: 'finish', finishReason: 'length' };
  },
};

const REASONING = 'The user greets me. Add a question? No.';

describe('a reasoning model', () => {
  it('streams its reasoning as chunks of the reasoning part, with offsets of their own, apart from its answer', async () => {
    await fixture.start({ model: reasoningModel });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    const { completed, update } = await completion(client, threadId, assistantNodeId);

    expect(completed).toMatchObject({ finishReason: 'length', finalContentLength: 'Hello there!'.length });
    expect(streamedText(client, assistantNodeId)).toBe('Hello there!');
    expect(
      chunksOf(client, assistantNodeId, 'reasoning').map(({ offset, delta, part }) => ({ offset, delta, part })),
    ).toEqual([
      { offset: 0, delta: 'The user greets me. ', part: 'reasoning' },
      { offset: 20, delta: 'Add a question?', part: 'reasoning' },
      { offset: 35, delta: ' No.', part: 'reasoning' },
    ]);
    expect(chunksOf(client, assistantNodeId).every((chunk) => !('part' in chunk))).toBe(true);
    expect(update.nodes[assistantNodeId]).toMatchObject({
      content: 'Hello there!',
      reasoning: REASONING,
      status: 'completed',
    });
    expect((await requestSync(client, threadId)).nodes[assistantNodeId]).toMatchObject({
      content: 'Hello there!',
      reasoning: REASONING,
    });
  });

  it('never gives the reasoning back to a model: the next prompt sees the answer alone', async () => {
    const model = new ScriptedModel(() => ({ chunks: [{ reasoning: 'Secret thoughts.' }, 'Answer.'] }), {
      gated: false,
    });
    await fixture.start({ model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const first = await prompt(client, threadId, 'One');
    await completion(client, threadId, first.assistantNodeId);
    await prompt(client, threadId, 'Two');

    expect((await model.call(1)).messages).toEqual([
      { role: 'user', content: 'One' },
      { role: 'assistant', content: 'Answer.' },
      { role: 'user', content: 'Two' },
    ]);
  });

  it('a pivot while it reasons cuts the reasoning where the client had shown it and keeps an empty answer', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel((index) =>
      index === 0
        ? { chunks: [{ reasoning: 'Let me ' }, { reasoning: 'think about it' }, 'Never sent'] }
        : { chunks: ['Sure.'], gated: false },
    );
    await fixture.start({ model, store });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    (await model.call(0)).release(2);
    await chunksReceived(client, assistantNodeId, 2, 'reasoning');

    const branch = await pivot(client, threadId, assistantNodeId, 'Something else', {
      receivedContentLength: 0,
      receivedReasoningLength: 10,
    });

    expect(client.all('CPP_STREAM_HALTED')[0]?.payload).toEqual({
      interruptedNodeId: assistantNodeId,
      finalContentLength: 0,
      finalReasoningLength: 10,
      part: 'reasoning',
      lastChunkReceived: 'thi',
      threadId,
      reason: 'pivot',
    });
    expect(branch.update.nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: '',
      reasoning: 'Let me thi',
    });
    expect((await model.call(0)).signal.aborted).toBe(true);
    expect((await model.call(1)).messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'user', content: 'Something else' },
    ]);
    expect((await store.loadThread(threadId))?.graph.nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: '',
      reasoning: 'Let me thi',
    });
  });

  it('a stop in the answer keeps the reasoning whole and cuts the answer, as a stop without reasoning does', async () => {
    const model = new ScriptedModel({ chunks: [{ reasoning: 'Plan.' }, 'Hello', ' world', ' and more'] });
    await fixture.start({ model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    (await model.call(0)).release(3);
    await chunksReceived(client, assistantNodeId, 2);

    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId, receivedContentLength: 7 });
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[assistantNodeId]?.status === 'interrupted',
    );

    const halted = client.all('CPP_STREAM_HALTED')[0]?.payload;
    expect(halted).toMatchObject({
      finalContentLength: 7,
      finalReasoningLength: 5,
      lastChunkReceived: ' w',
      reason: 'stop',
    });
    expect(halted).not.toHaveProperty('part');
    expect(update.nodes[assistantNodeId]).toMatchObject({ content: 'Hello w', reasoning: 'Plan.' });
  });
});
