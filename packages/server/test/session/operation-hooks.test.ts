import { setImmediate as nextTurn } from 'node:timers/promises';
import { CPPError, ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { type CPPServerEvents, MemoryStore } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { chunksReceived, openThread, pivot, prompt, requestSync } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

type HookEvent = Extract<keyof CPPServerEvents, `before${string}`>;
const HOOK_EVENTS: HookEvent[] = [
  'beforePrompt',
  'beforeRegenerate',
  'beforeContinue',
  'beforeStop',
  'beforeAnchor',
  'beforeDeleteBranch',
  'beforeRename',
  'beforeDeleteThread',
];

/** What a hook was told: the operation, who asked, on which thread, with which model. */
interface Told {
  type: string;
  did: string;
  threadId: string;
  model: string | undefined;
  request: object;
}

/**
 * A thread of `client`, watched by a second connection, whose first answer streams one chunk and waits: the model is
 * gated, so that nothing reaches a subscriber unless the test lets it. Streamed text is not persisted meanwhile
 * (`persistIntervalMs`), so that the store changes only by what the operations commit.
 */
async function watchedStreamingThread() {
  const store = new MemoryStore();
  const model = new ScriptedModel({ chunks: ['Hello', ' world', '!'] });
  const server = await fixture.start({ model, store, persistIntervalMs: 600_000 });
  const client = await fixture.connect({ did: 'did:web:alice.example' });
  const { threadId } = await openThread(client, { patches: true });
  const { userNodeId, assistantNodeId } = await prompt(client, threadId, 'Tell me about Clojure');
  (await model.call(0)).release(1);
  await chunksReceived(client, assistantNodeId, 1);
  const watcher = await fixture.connect();
  await openThread(watcher, { threadId, patches: true });
  client.send('CPP_MODEL_LIST', {});
  const { defaultModel } = (await client.next('CPP_MODELS')).payload;
  return { server, store, model, client, watcher, threadId, userNodeId, assistantNodeId, defaultModel };
}

/**
 * Sends a frame a hook refuses and checks that nothing changed: the client gets the hook's FORBIDDEN for the frame,
 * the store holds the same thread, and the watcher, synced after it in the thread's turn, got nothing before that.
 */
async function expectRefused(
  setup: { store: MemoryStore; client: RawClient; watcher: RawClient; threadId: string },
  type: string,
  payload: Record<string, unknown>,
): Promise<void> {
  const { store, client, watcher, threadId } = setup;
  const stored = await store.loadThread(threadId);
  const mark = watcher.mark();
  const id = `refused-${type}`;
  client.send(type, payload, { id });
  const error = (await client.next('CPP_ERROR', (frame) => frame.payload.refId === id)).payload;
  expect(error).toMatchObject({ code: ErrorCode.FORBIDDEN, refType: type, message: `${type}: not by policy` });
  expect(await store.loadThread(threadId)).toEqual(stored);
  const synced = await requestSync(watcher, threadId);
  expect(synced.version).toBe(stored?.graph.version);
  expect(watcher.since(mark).map((frame) => frame.type)).toEqual(['CPP_SYNC_GRAPH']);
}

describe('operation hooks', () => {
  it('refuse every thread-changing operation with the CPPError they throw, and then nothing changes', async () => {
    const setup = await watchedStreamingThread();
    const { server, client, threadId, userNodeId, assistantNodeId, defaultModel } = setup;
    const told: Told[] = [];
    const refuse = (context: CPPServerEvents[HookEvent][0]) => {
      const { type, identity, model, request } = context;
      told.push({ type, did: identity.did, threadId: context.threadId, model, request });
      throw new CPPError(ErrorCode.FORBIDDEN, `${type}: not by policy`);
    };
    for (const event of HOOK_EVENTS) server.on(event, refuse);

    // While the answer streams: neither halted nor replaced.
    const regenerate = { activeThreadId: threadId, userNodeId, newNodeId: newMessageId() };
    await expectRefused(setup, 'CPP_REGENERATE', regenerate);
    await expectRefused(setup, 'CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });

    // A hook removed runs no more: the stop goes through, and the thread is idle for the rest.
    server.off('beforeStop', refuse);
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });
    await client.next('CPP_STREAM_HALTED');
    // Taken in the thread's turn after the stop's commit: the watcher has had the stop's frames once it arrives.
    await requestSync(setup.watcher, threadId);

    const promptRequest = { activeThreadId: threadId, userPrompt: 'Rust?', newNodeId: newMessageId() };
    await expectRefused(setup, 'CPP_PROMPT', promptRequest);
    // An edit is a prompt beside the edited node: the same hook.
    const edit = {
      activeThreadId: threadId,
      userPrompt: 'Clojure, briefly',
      newNodeId: newMessageId(),
      parentNodeId: userNodeId,
    };
    await expectRefused(setup, 'CPP_PROMPT', edit);
    await expectRefused(setup, 'CPP_CONTINUE', { activeThreadId: threadId, nodeId: assistantNodeId });
    await expectRefused(setup, 'CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: userNodeId });
    await expectRefused(setup, 'CPP_BRANCH_DELETE', { activeThreadId: threadId, nodeId: assistantNodeId });
    await expectRefused(setup, 'CPP_THREAD_RENAME', { threadId, title: 'Languages' });
    await expectRefused(setup, 'CPP_THREAD_DELETE', { threadId });
    expect(setup.model.calls).toHaveLength(1);

    const alice = { did: 'did:web:alice.example', threadId };
    expect(told).toEqual([
      { ...alice, type: 'CPP_REGENERATE', model: defaultModel, request: regenerate },
      {
        ...alice,
        type: 'CPP_STREAM_STOP',
        model: undefined,
        request: expect.objectContaining({ nodeId: assistantNodeId }),
      },
      { ...alice, type: 'CPP_PROMPT', model: defaultModel, request: promptRequest },
      { ...alice, type: 'CPP_PROMPT', model: defaultModel, request: edit },
      {
        ...alice,
        type: 'CPP_CONTINUE',
        model: defaultModel,
        request: expect.objectContaining({ nodeId: assistantNodeId }),
      },
      {
        ...alice,
        type: 'CPP_ANCHOR_HEAD',
        model: undefined,
        request: expect.objectContaining({ targetNodeId: userNodeId }),
      },
      {
        ...alice,
        type: 'CPP_BRANCH_DELETE',
        model: undefined,
        request: expect.objectContaining({ nodeId: assistantNodeId }),
      },
      { ...alice, type: 'CPP_THREAD_RENAME', model: undefined, request: { threadId, title: 'Languages' } },
      { ...alice, type: 'CPP_THREAD_DELETE', model: undefined, request: { threadId } },
    ]);
  });

  it('run after the checks: a frame its checks refuse never reaches them', async () => {
    const { server, client, threadId } = await watchedStreamingThread();
    let called = 0;
    for (const event of HOOK_EVENTS) server.on(event, () => void called++);
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'Busy?', newNodeId: newMessageId() },
      { id: 'p' },
    );
    expect((await client.next('CPP_ERROR')).payload).toMatchObject({ code: ErrorCode.THREAD_BUSY, refId: 'p' });
    client.send('CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: newMessageId() }, { id: 'a' });
    expect((await client.next('CPP_ERROR')).payload).toMatchObject({ code: ErrorCode.NOT_FOUND, refId: 'a' });
    expect(called).toBe(0);
  });

  it('compose: each awaited in the order added, `once` ones once, the first to throw ending the run', async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['Hi'] }, { gated: false }) });
    const { server } = fixture;
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const ran: string[] = [];
    server.on('beforePrompt', async () => {
      ran.push('first');
      await nextTurn();
      ran.push('first, done');
    });
    server.once('beforePrompt', () => void ran.push('once'));
    server.on('beforePrompt', (context) => {
      ran.push('last');
      if (context.request.userPrompt === 'refused') throw new Error('not a CPPError');
    });

    await prompt(client, threadId, 'one');
    await prompt(client, threadId, 'two');
    expect(ran).toEqual(['first', 'first, done', 'once', 'last', 'first', 'first, done', 'last']);

    server.prependListener('beforePrompt', () => {
      ran.push('prepended');
      throw new CPPError(ErrorCode.RATE_LIMITED, 'slow down');
    });
    ran.length = 0;
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'three', newNodeId: newMessageId() },
      { id: '3' },
    );
    expect((await client.next('CPP_ERROR')).payload).toMatchObject({ code: ErrorCode.RATE_LIMITED, refId: '3' });
    expect(ran).toEqual(['prepended']);
    server.removeAllListeners('beforePrompt');
    server.on('beforePrompt', (context) => {
      if (context.request.userPrompt === 'refused') throw new Error('not a CPPError');
    });
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'refused', newNodeId: newMessageId() },
      { id: '4' },
    );
    expect((await client.next('CPP_ERROR')).payload).toMatchObject({ code: ErrorCode.INTERNAL, refId: '4' });
  });
});

describe("server.once('pivot')", () => {
  it('runs for one pivot only, while `on` runs for each', async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['Hi'] }, { gated: false }) });
    const { server } = fixture;
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    let { assistantNodeId } = await prompt(client, threadId, 'start');
    let once = 0;
    let every = 0;
    server.once('pivot', () => void once++);
    server.on('pivot', () => void every++);
    for (const userPrompt of ['one', 'two', 'three'])
      ({ assistantNodeId } = await pivot(client, threadId, assistantNodeId, userPrompt));
    expect([once, every]).toEqual([1, 3]);
  });
});
