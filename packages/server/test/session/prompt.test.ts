import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import {
  completion,
  expectError,
  listThreads,
  nextUpdate,
  openThread,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();
/** Server-generated ids are a ULID behind the prefix. */
const GENERATED_MESSAGE_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;

interface Setup {
  model: ScriptedModel;
  client: RawClient;
  threadId: string;
}

async function setUp(): Promise<Setup> {
  const model = new ScriptedModel({
    chunks: ['Fine', ', thanks'],
    ending: { finishReason: 'length', usage: { inputTokens: 7, outputTokens: 2 } },
  });
  await fixture.start({ model });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  return { model, client, threadId };
}

/** A finished exchange: the prompt's answer released in full and completed. */
async function exchange({ model, client, threadId }: Setup, userPrompt: string, fields: Record<string, unknown> = {}) {
  const callIndex = model.calls.length;
  const sent = await prompt(client, threadId, userPrompt, fields);
  (await model.call(callIndex)).releaseAll();
  await completion(client, threadId, sent.assistantNodeId);
  return sent;
}

function sendPrompt(setup: Setup, fields: Record<string, unknown>, id = 'prompt-frame'): void {
  setup.client.send(
    'CPP_PROMPT',
    { activeThreadId: setup.threadId, userPrompt: 'Hello', newNodeId: newMessageId(), ...fields },
    { id },
  );
}

/** The refused frame changed nothing: the thread is as it was before. */
async function expectUnchanged(setup: Setup, before: Awaited<ReturnType<typeof requestSync>>): Promise<void> {
  expect(await requestSync(setup.client, setup.threadId)).toEqual(before);
}

describe('CPP_PROMPT', () => {
  it('adds the first exchange as the root and completes it with the finish reason, usage and model', async () => {
    const setup = await setUp();
    const { userNodeId, assistantNodeId, update } = await prompt(setup.client, setup.threadId, 'How are you?');
    expect(assistantNodeId).toMatch(GENERATED_MESSAGE_ID);
    expect(update.rootNodeId).toBe(userNodeId);
    expect(update.nodes[userNodeId]).toMatchObject({
      parentId: null,
      role: 'user',
      status: 'completed',
      content: 'How are you?',
    });
    (await setup.model.call(0)).releaseAll();
    const { completed, update: done } = await completion(setup.client, setup.threadId, assistantNodeId);
    expect(completed).toEqual({
      threadId: setup.threadId,
      nodeId: assistantNodeId,
      finalContentLength: 'Fine, thanks'.length,
      finishReason: 'length',
    });
    expect(done.nodes[assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Fine, thanks',
      model: 'scripted-model',
      usage: { inputTokens: 7, outputTokens: 2 },
    });
  });

  it('adds the exchange under the head when no parent is given, and under parentNodeId when one is', async () => {
    const setup = await setUp();
    const first = await exchange(setup, 'One');
    const second = await exchange(setup, 'Two');
    expect(second.update.nodes[second.userNodeId]?.parentId).toBe(first.assistantNodeId);

    const branch = await exchange(setup, 'Two, differently', { parentNodeId: first.assistantNodeId });
    expect(branch.update.nodes[first.assistantNodeId]?.childrenIds).toEqual([second.userNodeId, branch.userNodeId]);
    expect(branch.update.activeHeadMessageId).toBe(branch.assistantNodeId);

    const underUser = await exchange(setup, 'Under a user node', { parentNodeId: first.userNodeId });
    expect(underUser.update.nodes[first.userNodeId]?.childrenIds).toEqual([
      first.assistantNodeId,
      underUser.userNodeId,
    ]);
  });

  it('is refused with THREAD_BUSY while an answer streams, changing nothing', async () => {
    const setup = await setUp();
    const { assistantNodeId } = await prompt(setup.client, setup.threadId, 'Long answer');
    const before = await requestSync(setup.client, setup.threadId);
    sendPrompt(setup, {});
    const busy = await expectError(setup.client, ErrorCode.THREAD_BUSY, {
      refId: 'prompt-frame',
      refType: 'CPP_PROMPT',
    });
    expect(busy.message).toContain(assistantNodeId);
    await expectUnchanged(setup, before);
    (await setup.model.call(0)).releaseAll();
    await completion(setup.client, setup.threadId, assistantNodeId);
    await exchange(setup, 'Now it is free');
  });

  it('applies frames in the order received: a second prompt sent at once is busy', async () => {
    const setup = await setUp();
    const [first, second] = [newMessageId(), newMessageId()];
    sendPrompt(setup, { newNodeId: first, userPrompt: 'First' }, 'first');
    sendPrompt(setup, { newNodeId: second, userPrompt: 'Second' }, 'second');
    await expectError(setup.client, ErrorCode.THREAD_BUSY, { refId: 'second' });
    const sync = await requestSync(setup.client, setup.threadId);
    expect(sync.rootNodeId).toBe(first);
    expect(sync.nodes[second]).toBeUndefined();
  });
});

describe('expectedVersion', () => {
  it('is accepted when current', async () => {
    const setup = await setUp();
    await exchange(setup, 'One', { expectedVersion: 0 });
    await exchange(setup, 'Two', { expectedVersion: 2 });
  });

  it('is refused with CONFLICT when stale, changing nothing', async () => {
    const setup = await setUp();
    await exchange(setup, 'One');
    const before = await requestSync(setup.client, setup.threadId);
    for (const expectedVersion of [0, 1, 3]) {
      sendPrompt(setup, { expectedVersion });
      expect((await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'prompt-frame' })).message).toContain(
        'version 2',
      );
    }
    await expectUnchanged(setup, before);
  });

  it('is checked before the thread is found busy', async () => {
    const setup = await setUp();
    await prompt(setup.client, setup.threadId, 'Streaming');
    sendPrompt(setup, { expectedVersion: 0 });
    await expectError(setup.client, ErrorCode.CONFLICT);
  });
});

describe('an already used newNodeId', () => {
  it('in an exact retry creates nothing and answers the sender alone with CPP_SYNC_GRAPH, even while the answer streams', async () => {
    const setup = await setUp();
    const bystander = await fixture.connect();
    await openThread(bystander, { threadId: setup.threadId, patches: true });
    const newNodeId = newMessageId();
    const first = await prompt(setup.client, setup.threadId, 'Only once', { newNodeId });
    await nextUpdate(bystander, setup.threadId);
    const bystanderMark = bystander.mark();

    for (const fields of [{}, { parentNodeId: undefined }]) {
      sendPrompt(setup, { newNodeId, userPrompt: 'Only once', ...fields });
      const sync = (await setup.client.next('CPP_SYNC_GRAPH')).payload;
      expect(sync.version).toBe(1);
      expect(Object.keys(sync.nodes).sort()).toEqual([first.userNodeId, first.assistantNodeId].sort());
    }
    await listThreads(bystander);
    expect(bystander.since(bystanderMark).map((frame) => frame.type)).toEqual(['CPP_THREADS']);
  });

  it('in an exact retry, with the same parent and the expectedVersion that is now stale, creates nothing', async () => {
    const setup = await setUp();
    const first = await exchange(setup, 'One');
    const newNodeId = newMessageId();
    const retried = { newNodeId, userPrompt: 'Two', parentNodeId: first.assistantNodeId, expectedVersion: 2 };
    await exchange(setup, 'Two', retried);
    const before = await requestSync(setup.client, setup.threadId);
    expect(before.version).toBe(4);
    sendPrompt(setup, retried);
    expect((await setup.client.next('CPP_SYNC_GRAPH')).payload).toEqual(before);
  });

  it('with a different prompt, a different parent or for an assistant node is refused with CONFLICT', async () => {
    const setup = await setUp();
    const first = await exchange(setup, 'One');
    const second = await exchange(setup, 'Two');
    const before = await requestSync(setup.client, setup.threadId);
    const reuses = [
      { newNodeId: second.userNodeId, userPrompt: 'Two, but different' },
      { newNodeId: second.userNodeId, userPrompt: 'Two', parentNodeId: first.userNodeId },
      { newNodeId: first.assistantNodeId, userPrompt: 'Fine, thanks' },
    ];
    for (const fields of reuses) {
      sendPrompt(setup, fields);
      await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'prompt-frame' });
    }
    await expectUnchanged(setup, before);
  });

  it('is refused with CONFLICT before the thread is found busy', async () => {
    const setup = await setUp();
    const { userNodeId } = await prompt(setup.client, setup.threadId, 'Streaming');
    sendPrompt(setup, { newNodeId: userNodeId, userPrompt: 'Something else' });
    await expectError(setup.client, ErrorCode.CONFLICT);
  });

  it('in another thread is refused with CONFLICT, changing neither thread', async () => {
    const setup = await setUp();
    const elsewhere = await exchange(setup, 'In the first thread');
    const other = (await openThread(setup.client, { patches: true })).threadId;
    const before = [await requestSync(setup.client, setup.threadId), await requestSync(setup.client, other)];
    for (const newNodeId of [elsewhere.userNodeId, elsewhere.assistantNodeId]) {
      setup.client.send(
        'CPP_PROMPT',
        { activeThreadId: other, userPrompt: 'In the first thread', newNodeId },
        { id: 'elsewhere' },
      );
      await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'elsewhere' });
    }
    expect([await requestSync(setup.client, setup.threadId), await requestSync(setup.client, other)]).toEqual(before);
  });

  it('in another thread is refused with CONFLICT even while this thread is busy (ids are checked first)', async () => {
    const setup = await setUp();
    const elsewhere = await exchange(setup, 'In the first thread');
    const other = (await openThread(setup.client, { patches: true })).threadId;
    await prompt(setup.client, other, 'Streaming here');
    setup.client.send('CPP_PROMPT', { activeThreadId: other, userPrompt: 'x', newNodeId: elsewhere.userNodeId });
    await expectError(setup.client, ErrorCode.CONFLICT);
  });
});
