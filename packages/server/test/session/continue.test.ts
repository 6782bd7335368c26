import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { MemoryStore } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  chunksOf,
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
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** The first answer stops after two chunks ("Clojure is "); every later call is the continuation. */
async function stoppedAnswer(store = new MemoryStore()) {
  const model = new ScriptedModel((index) =>
    index === 0 ? { chunks: ['Clojure ', 'is ', 'a ', 'Lisp.'] } : { chunks: ['a Lisp', ' on the JVM.'] },
  );
  await fixture.start({ model, store });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  const { userNodeId, assistantNodeId } = await prompt(client, threadId, 'Tell me about Clojure');
  (await model.call(0)).release(2);
  await chunksReceived(client, assistantNodeId, 2);
  client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });
  const stopped = await nextUpdate(
    client,
    threadId,
    (update) => update.nodes[assistantNodeId]?.status === 'interrupted',
  );
  return { model, store, client, threadId, userNodeId, assistantNodeId, version: stopped.version };
}

function sendContinue(client: RawClient, threadId: string, nodeId: string, fields: Record<string, unknown> = {}): void {
  client.send('CPP_CONTINUE', { activeThreadId: threadId, nodeId, ...fields }, { id: 'continue-frame' });
}

describe('CPP_CONTINUE', () => {
  it('streams the same node again from where it stopped, the model given its partial text to go on with', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId } = setup;
    const sentBefore = chunksOf(client, assistantNodeId).length;

    sendContinue(client, threadId, assistantNodeId, { expectedVersion: setup.version });
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[assistantNodeId]?.status === 'streaming',
    );
    expect(update).toMatchObject({ version: setup.version + 1, activeHeadMessageId: assistantNodeId });
    expect(update.nodes[assistantNodeId]).toMatchObject({ content: 'Clojure is ', model: 'scripted-model' });
    const call = await setup.model.call(1);
    expect(call.continues).toBe(true);
    expect(call.messages).toEqual([
      { role: 'user', content: 'Tell me about Clojure' },
      { role: 'assistant', content: 'Clojure is ' },
    ]);
    call.releaseAll();
    const { completed, update: finished } = await completion(client, threadId, assistantNodeId);

    expect(
      chunksOf(client, assistantNodeId)
        .slice(sentBefore)
        .map(({ offset, delta }) => ({ offset, delta })),
    ).toEqual([
      { offset: 11, delta: 'a Lisp' },
      { offset: 17, delta: ' on the JVM.' },
    ]);
    expect(completed.finalContentLength).toBe('Clojure is a Lisp on the JVM.'.length);
    expect(finished.nodes[assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Clojure is a Lisp on the JVM.',
    });
    expect((await setup.store.loadThread(threadId))?.graph.nodes[assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Clojure is a Lisp on the JVM.',
    });
  });

  it('answers a continue sent again while its continuation streams with a sync, before any version check, and changes nothing', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId } = setup;
    sendContinue(client, threadId, assistantNodeId, { expectedVersion: setup.version });
    await nextUpdate(client, threadId, (candidate) => candidate.nodes[assistantNodeId]?.status === 'streaming');
    const mark = client.mark();

    sendContinue(client, threadId, assistantNodeId, { expectedVersion: setup.version });
    const sync = await client.next('CPP_SYNC_GRAPH');

    expect(sync.payload).toMatchObject({ version: setup.version + 1 });
    expect(client.since(mark).map((frame) => frame.type)).toEqual(['CPP_SYNC_GRAPH']);
    expect(setup.model.calls).toHaveLength(2);
  });

  it('refuses, in order, an unknown node, a stale version, a node that is not an interrupted or failed leaf answer, an unknown model', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId, userNodeId } = setup;
    const expectRefused = async (nodeId: string, fields: Record<string, unknown>, code: ErrorCode) => {
      sendContinue(client, threadId, nodeId, fields);
      await expectError(client, code, { refId: 'continue-frame', refType: 'CPP_CONTINUE' });
    };

    await expectRefused(newMessageId(), { expectedVersion: 0 }, ErrorCode.NOT_FOUND);
    await expectRefused(userNodeId, { expectedVersion: 0 }, ErrorCode.CONFLICT);
    await expectRefused(userNodeId, {}, ErrorCode.INVALID_NODE);
    await expectRefused(assistantNodeId, { model: 'no-such-model' }, ErrorCode.UNKNOWN_MODEL);
    const branch = await pivot(client, threadId, assistantNodeId, 'And Scheme?');
    await expectRefused(assistantNodeId, {}, ErrorCode.INVALID_NODE);
    (await setup.model.call(1)).releaseAll();
    await completion(client, threadId, branch.assistantNodeId);
    await expectRefused(branch.assistantNodeId, {}, ErrorCode.INVALID_NODE);
    expect(setup.model.calls).toHaveLength(2);
  });

  it('refuses with THREAD_BUSY while another answer of the thread streams', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId, userNodeId } = setup;
    await prompt(client, threadId, 'Meanwhile', { parentNodeId: userNodeId });

    sendContinue(client, threadId, assistantNodeId);
    await expectError(client, ErrorCode.THREAD_BUSY, { refId: 'continue-frame' });
  });

  it('is cut by a pivot as any answer is: the cut counts the whole node, and may fall before the continuation', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId } = setup;
    sendContinue(client, threadId, assistantNodeId);
    await nextUpdate(client, threadId, (candidate) => candidate.nodes[assistantNodeId]?.status === 'streaming');
    (await setup.model.call(1)).release(1);
    await client.next('CPP_STREAM_CHUNK', (frame) => frame.payload.offset === 11);
    expect(streamedText(client, assistantNodeId)).toBe('Clojure is a Lisp');

    const branch = await pivot(client, threadId, assistantNodeId, 'Shorter', { receivedContentLength: 14 });
    expect(client.all('CPP_STREAM_HALTED')[1]?.payload).toMatchObject({
      finalContentLength: 14,
      lastChunkReceived: 'a L',
      reason: 'pivot',
    });
    expect(branch.update.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure is a L' });

    (await setup.model.call(2)).releaseAll();
    await completion(client, threadId, branch.assistantNodeId);
    sendContinue(client, threadId, branch.assistantNodeId);
    await expectError(client, ErrorCode.INVALID_NODE);
  });

  it('reports an empty lastChunkReceived when the cut falls in the text the node had before its continuation', async () => {
    const setup = await stoppedAnswer();
    const { client, threadId, assistantNodeId } = setup;
    sendContinue(client, threadId, assistantNodeId);
    await nextUpdate(client, threadId, (candidate) => candidate.nodes[assistantNodeId]?.status === 'streaming');
    (await setup.model.call(1)).release(1);
    await client.next('CPP_STREAM_CHUNK', (frame) => frame.payload.offset === 11);

    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId, receivedContentLength: 5 });
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[assistantNodeId]?.status === 'interrupted',
    );
    expect(client.all('CPP_STREAM_HALTED').at(-1)?.payload).toMatchObject({
      finalContentLength: 5,
      lastChunkReceived: '',
      reason: 'stop',
    });
    expect(update.nodes[assistantNodeId]?.content).toBe('Cloju');
  });
});

describe('a model named on continue and on regenerate', () => {
  it('continues with the model that wrote the node when none is named, and with the model named, recorded on the node', async () => {
    // Every even call of the fast model fails after its first chunk; every odd one is a continuation.
    const fast = new ScriptedModel(
      (index) =>
        index % 2 === 0 ? { chunks: ['Fast'], ending: new Error('upstream broke') } : { chunks: [' again.'] },
      { gated: false },
    );
    const deep = new ScriptedModel({ chunks: [' and deep.'] }, { gated: false });
    await fixture.start({
      models: [
        { id: 'fast', provider: fast },
        { id: 'deep', provider: deep },
      ],
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const failedAnswer = async (text: string) => {
      const { assistantNodeId } = await prompt(client, threadId, text, { model: 'fast' });
      await nextUpdate(client, threadId, (candidate) => candidate.nodes[assistantNodeId]?.status === 'failed');
      return assistantNodeId;
    };

    const first = await failedAnswer('Go');
    sendContinue(client, threadId, first);
    expect((await completion(client, threadId, first)).update.nodes[first]).toMatchObject({
      content: 'Fast again.',
      model: 'fast',
    });

    const second = await failedAnswer('Go on');
    sendContinue(client, threadId, second, { model: 'deep' });
    expect((await completion(client, threadId, second)).update.nodes[second]).toMatchObject({
      content: 'Fast and deep.',
      model: 'deep',
    });
  });

  it('regenerates with the model named, recorded on the new answer; an unknown one is refused before anything halts', async () => {
    const deep = new ScriptedModel({ chunks: ['Deep answer.'] }, { gated: false });
    const fast = new ScriptedModel({ chunks: ['Fast', ' answer', ' never done'] });
    await fixture.start({
      models: [
        { id: 'fast', provider: fast },
        { id: 'deep', provider: deep },
      ],
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { userNodeId, assistantNodeId } = await prompt(client, threadId, 'Compare');
    (await fast.call(0)).release(1);
    await chunksReceived(client, assistantNodeId, 1);

    client.send(
      'CPP_REGENERATE',
      { activeThreadId: threadId, userNodeId, newNodeId: newMessageId(), model: 'nope' },
      { id: 'regenerate-frame' },
    );
    await expectError(client, ErrorCode.UNKNOWN_MODEL, { refId: 'regenerate-frame' });
    expect(client.all('CPP_STREAM_HALTED')).toEqual([]);

    const newNodeId = newMessageId();
    client.send('CPP_REGENERATE', { activeThreadId: threadId, userNodeId, newNodeId, model: 'deep' });
    await completion(client, threadId, newNodeId);
    const { nodes } = await requestSync(client, threadId);
    expect(nodes[newNodeId]).toMatchObject({ content: 'Deep answer.', model: 'deep' });
    expect(nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Fast', model: 'fast' });
  });
});
