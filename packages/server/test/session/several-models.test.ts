import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import type { ModelEntry } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  expectError,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

// One prompt answered by several models side by side (docs/PROTOCOL.md §30), over a real WebSocket: one user node,
// one streaming answer per model, all at once; stop, pivot, regenerate and anchor among them.

const fixture = useServer();

/** Three gated models, each answering with its own name in three chunks. */
function threeModels(): { models: ModelEntry[]; scripted: Record<'alpha' | 'beta' | 'gamma', ScriptedModel> } {
  const scripted = {
    alpha: new ScriptedModel({ chunks: ['alpha ', 'says ', 'hello'] }),
    beta: new ScriptedModel({ chunks: ['beta ', 'says ', 'hello'] }),
    gamma: new ScriptedModel({ chunks: ['gamma ', 'says ', 'hello'] }),
  };
  const models = Object.entries(scripted).map(([id, provider]) => ({ id, label: id, provider }));
  return { models, scripted };
}

/** A thread where `models` answer one prompt, each having streamed its first chunk. */
async function answersStreaming(models: string[] = ['alpha', 'beta', 'gamma'], options = {}) {
  const three = threeModels();
  await fixture.start({ models: three.models, ...options });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  const asked = await prompt(client, threadId, 'Who are you?', { models });
  const answers = asked.update.nodes[asked.userNodeId]!.childrenIds;
  for (const model of models) (await three.scripted[model as 'alpha'].call(0)).release();
  for (const nodeId of answers) await chunksReceived(client, nodeId, 1);
  return { ...three, client, threadId, asked, answers };
}

describe('one prompt answered by several models at once', () => {
  it('adds one user node and one streaming answer per model, in order, all streaming at once; the head is the first', async () => {
    const { scripted, client, threadId, asked, answers } = await answersStreaming();
    expect(answers).toHaveLength(3);
    expect(answers.map((id) => asked.update.nodes[id])).toMatchObject([
      { model: 'alpha', status: 'streaming', parentId: asked.userNodeId },
      { model: 'beta', status: 'streaming', parentId: asked.userNodeId },
      { model: 'gamma', status: 'streaming', parentId: asked.userNodeId },
    ]);
    expect(asked.update.activeHeadMessageId).toBe(answers[0]);
    // Each model was called once, with the same context, and every answer streams before any ends.
    for (const model of Object.values(scripted)) {
      expect(model.calls).toHaveLength(1);
      expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: 'Who are you?' }]);
    }
    expect(answers.map((id) => streamedText(client, id))).toEqual(['alpha ', 'beta ', 'gamma ']);

    // They end one by one; each end is its own.
    (await scripted.beta.call(0)).releaseAll();
    await completion(client, threadId, answers[1]!);
    expect((await requestSync(client, threadId)).nodes[answers[0]!]?.status).toBe('streaming');
    (await scripted.alpha.call(0)).releaseAll();
    (await scripted.gamma.call(0)).releaseAll();
    await completion(client, threadId, answers[0]!);
    await completion(client, threadId, answers[2]!);
    const sync = await requestSync(client, threadId);
    expect(answers.map((id) => sync.nodes[id])).toMatchObject([
      { content: 'alpha says hello', status: 'completed' },
      { content: 'beta says hello', status: 'completed' },
      { content: 'gamma says hello', status: 'completed' },
    ]);
    expect(sync.activeHeadMessageId).toBe(answers[0]);
  });

  it('hangs the next prompt under the answer the person picked (an anchor), the others staying siblings', async () => {
    const { scripted, client, threadId, answers } = await answersStreaming(['alpha', 'beta']);
    for (const model of [scripted.alpha, scripted.beta]) (await model.call(0)).releaseAll();
    await completion(client, threadId, answers[0]!);
    await completion(client, threadId, answers[1]!);
    client.send('CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: answers[1]! });
    await nextUpdate(client, threadId, (update) => update.activeHeadMessageId === answers[1]);
    const next = await prompt(client, threadId, 'Go on', { model: 'beta' });
    expect(next.update.nodes[next.userNodeId]?.parentId).toBe(answers[1]);
    (await scripted.beta.call(1)).releaseAll();
    await completion(client, threadId, next.assistantNodeId);
    expect(scripted.beta.calls[1]!.messages.map((message) => message.content)).toEqual([
      'Who are you?',
      'beta says hello',
      'Go on',
    ]);
    const sync = await requestSync(client, threadId);
    expect(sync.nodes[answers[0]!]).toMatchObject({ status: 'completed', childrenIds: [] });
  });

  it('halts only the answer a stop names, cut at what the client had shown; the others stream on', async () => {
    const { scripted, client, threadId, answers } = await answersStreaming();
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: answers[1]!, receivedContentLength: 2 });
    const halted = (await client.next('CPP_STREAM_HALTED')).payload;
    expect(halted).toMatchObject({ interruptedNodeId: answers[1], finalContentLength: 2, reason: 'stop' });
    await nextUpdate(client, threadId, (update) => update.nodes[answers[1]!]?.status === 'interrupted');
    expect(scripted.beta.calls[0]!.signal.aborted).toBe(true);
    expect(scripted.alpha.calls[0]!.signal.aborted).toBe(false);
    (await scripted.alpha.call(0)).releaseAll();
    (await scripted.gamma.call(0)).releaseAll();
    await completion(client, threadId, answers[0]!);
    await completion(client, threadId, answers[2]!);
    const sync = await requestSync(client, threadId);
    expect(answers.map((id) => [sync.nodes[id]?.status, sync.nodes[id]?.content])).toEqual([
      ['completed', 'alpha says hello'],
      ['interrupted', 'be'],
      ['completed', 'gamma says hello'],
    ]);
    expect(client.all('CPP_STREAM_HALTED')).toHaveLength(1);
  });

  it('halts every answer on a pivot, each cut at what the client had shown of it, and branches under the one named', async () => {
    const { scripted, client, threadId, answers } = await answersStreaming();
    const pivoted = await pivot(client, threadId, answers[0]!, 'Only you, alpha', {
      receivedContentLength: 3,
      siblingsReceived: [{ nodeId: answers[1], receivedContentLength: 1 }],
      model: 'alpha',
    });
    const halts = client.all('CPP_STREAM_HALTED').map((frame) => frame.payload);
    expect(halts.map((halt) => [halt.interruptedNodeId, halt.finalContentLength, halt.reason])).toEqual([
      [answers[0], 3, 'pivot'],
      [answers[1], 1, 'pivot'],
      // Not listed: cut at all it was sent.
      [answers[2], 6, 'pivot'],
    ]);
    // One change: the three cuts, the new prompt under the named answer, its answer.
    expect(answers.map((id) => [pivoted.update.nodes[id]?.status, pivoted.update.nodes[id]?.content])).toEqual([
      ['interrupted', 'alp'],
      ['interrupted', 'b'],
      ['interrupted', 'gamma '],
    ]);
    expect(pivoted.update.nodes[pivoted.userNodeId]?.parentId).toBe(answers[0]);
    for (const model of Object.values(scripted)) expect(model.calls[0]!.signal.aborted).toBe(true);
    (await scripted.alpha.call(1)).releaseAll();
    await completion(client, threadId, pivoted.assistantNodeId);
  });

  it('answers a pivot with several models, beside one another under the new prompt', async () => {
    const { scripted, client, threadId, answers } = await answersStreaming(['alpha']);
    const pivoted = await pivot(client, threadId, answers[0]!, 'Both of you now', { models: ['beta', 'gamma'] });
    const branch = pivoted.update.nodes[pivoted.userNodeId]!.childrenIds;
    expect(branch.map((id) => pivoted.update.nodes[id]?.model)).toEqual(['beta', 'gamma']);
    expect(pivoted.update.activeHeadMessageId).toBe(branch[0]);
    (await scripted.beta.call(0)).releaseAll();
    (await scripted.gamma.call(0)).releaseAll();
    await completion(client, threadId, branch[0]!);
    await completion(client, threadId, branch[1]!);
  });

  it('regenerates with several models: newNodeId is the first answer, the answers still streaming are halted', async () => {
    const { scripted, client, threadId, asked, answers } = await answersStreaming(['alpha', 'beta']);
    const newNodeId = newMessageId();
    client.send('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: asked.userNodeId,
      newNodeId,
      models: ['gamma', 'alpha'],
      siblingsReceived: [{ nodeId: answers[0], receivedContentLength: 0 }],
    });
    const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes[newNodeId] !== undefined);
    const children = update.nodes[asked.userNodeId]!.childrenIds;
    expect(children.slice(0, 3)).toEqual([...answers, newNodeId]);
    expect(children.slice(2).map((id) => update.nodes[id]?.model)).toEqual(['gamma', 'alpha']);
    expect(update.activeHeadMessageId).toBe(newNodeId);
    expect([update.nodes[answers[0]!]?.content, update.nodes[answers[1]!]?.content]).toEqual(['', 'beta ']);
    expect(client.all('CPP_STREAM_HALTED').map((frame) => frame.payload.reason)).toEqual(['regenerate', 'regenerate']);
    (await scripted.gamma.call(0)).releaseAll();
    (await scripted.alpha.call(1)).releaseAll();
    await completion(client, threadId, children[2]!);
    await completion(client, threadId, children[3]!);
  });

  it('refuses a prompt naming more than four models, a model twice, or model and models together, changing nothing', async () => {
    await fixture.start({ models: threeModels().models });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const refusals: Array<[Record<string, unknown>, ErrorCode]> = [
      [{ models: ['alpha', 'beta', 'gamma', 'alpha', 'beta'] }, ErrorCode.INVALID_FRAME],
      [{ models: ['alpha', 'alpha'] }, ErrorCode.INVALID_FRAME],
      [{ models: [] }, ErrorCode.INVALID_FRAME],
      [{ models: ['alpha'], model: 'beta' }, ErrorCode.INVALID_FRAME],
      [{ models: ['alpha', 'gpt-9'] }, ErrorCode.UNKNOWN_MODEL],
    ];
    for (const [index, [fields, code]] of refusals.entries()) {
      const id = `refused-${index}`;
      client.send(
        'CPP_PROMPT',
        { activeThreadId: threadId, userPrompt: 'Hi', newNodeId: newMessageId(), ...fields },
        { id },
      );
      await expectError(client, code, { refId: id });
    }
    expect(await requestSync(client, threadId)).toMatchObject({ version: 0, nodes: {} });
  });

  it('counts each answer against the generation limits: past them the prompt is refused whole, no model called', async () => {
    const three = threeModels();
    await fixture.start({ models: three.models, limits: { maxGenerationsPerConnection: 2 } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    client.send(
      'CPP_PROMPT',
      {
        activeThreadId: threadId,
        userPrompt: 'All three',
        newNodeId: newMessageId(),
        models: ['alpha', 'beta', 'gamma'],
      },
      { id: 'three' },
    );
    await expectError(client, ErrorCode.RATE_LIMITED, { refId: 'three' });
    expect(await requestSync(client, threadId)).toMatchObject({ version: 0, nodes: {} });
    // The two spawned before the refusal were halted and uncounted: two answers fit now.
    for (const model of [three.scripted.alpha, three.scripted.beta]) {
      for (const call of model.calls) expect(call.signal.aborted).toBe(true);
    }
    const two = await prompt(client, threadId, 'Two of you', { models: ['alpha', 'beta'] });
    const answers = two.update.nodes[two.userNodeId]!.childrenIds;
    expect(answers).toHaveLength(2);
    for (const model of [three.scripted.alpha, three.scripted.beta])
      (await model.call(model.calls.length - 1)).releaseAll();
    await completion(client, threadId, answers[0]!);
    await completion(client, threadId, answers[1]!);
  });

  it('keeps every answer as interrupted when the server shuts down while they stream', async () => {
    const { client, threadId, answers } = await answersStreaming(['alpha', 'beta']);
    const closing = fixture.server.close();
    const halts = [await client.next('CPP_STREAM_HALTED'), await client.next('CPP_STREAM_HALTED')];
    expect(halts.map((frame) => [frame.payload.interruptedNodeId, frame.payload.reason])).toEqual([
      [answers[0], 'shutdown'],
      [answers[1], 'shutdown'],
    ]);
    await closing;
    expect(threadId).toBeTruthy();
  });
});
