import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import {
  chunksOf,
  completion,
  expectError,
  listThreads,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread, type StreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

const streaming = (chunks: readonly string[], sent: number) => startStreamingThread(fixture, chunks, sent);

function sendPivot(setup: StreamingThread, fields: Record<string, unknown>, id = 'pivot-frame'): void {
  setup.client.send(
    'CPP_PIVOT_INIT',
    {
      interruptedNodeId: setup.assistantNodeId,
      activeThreadId: setup.threadId,
      userPrompt: 'Rust instead',
      newBranchNodeId: newMessageId(),
      ...fields,
    },
    { id },
  );
}

/** The stream was left alone: it still streams, and runs to its end when released. */
async function expectStillStreaming(setup: StreamingThread): Promise<void> {
  expect(setup.call.signal.aborted).toBe(false);
  expect((await requestSync(setup.client, setup.threadId)).nodes[setup.assistantNodeId]?.status).toBe('streaming');
  setup.call.releaseAll();
  await completion(setup.client, setup.threadId, setup.assistantNodeId);
  expect(setup.client.all('CPP_STREAM_HALTED')).toEqual([]);
}

describe('CPP_PIVOT_INIT on the streaming node', () => {
  it('aborts the model call, halts after the last chunk, and splices the branch in one change', async () => {
    const setup = await streaming(['Hello', ' wor', 'ld', ' and', ' more'], 3);
    const { client, threadId, assistantNodeId } = setup;
    const branch = await pivot(client, threadId, assistantNodeId, 'Rust instead');

    expect(setup.call.signal.aborted).toBe(true);
    const halted = client.all('CPP_STREAM_HALTED');
    expect(halted.map((frame) => frame.payload)).toEqual([
      {
        interruptedNodeId: assistantNodeId,
        finalContentLength: 'Hello world'.length,
        lastChunkReceived: 'ld',
        threadId,
        reason: 'pivot',
      },
    ]);
    const lastChunk = client
      .all('CPP_STREAM_CHUNK')
      .filter((frame) => frame.payload.nodeId === assistantNodeId)
      .at(-1)!;
    expect(client.frames.indexOf(halted[0]!)).toBeGreaterThan(client.frames.indexOf(lastChunk));

    expect(branch.update).toEqual({
      threadId,
      version: 2,
      rootNodeId: setup.userNodeId,
      activeHeadMessageId: branch.assistantNodeId,
      nodes: {
        [assistantNodeId]: expect.objectContaining({
          status: 'interrupted',
          content: 'Hello world',
          childrenIds: [branch.userNodeId],
        }),
        [branch.userNodeId]: expect.objectContaining({
          role: 'user',
          status: 'completed',
          content: 'Rust instead',
          parentId: assistantNodeId,
          childrenIds: [branch.assistantNodeId],
        }),
        [branch.assistantNodeId]: expect.objectContaining({
          role: 'assistant',
          status: 'streaming',
          content: '',
          parentId: branch.userNodeId,
        }),
      },
      title: expect.any(String),
    });
    const splice = client.all('CPP_GRAPH_PATCH').find((frame) => frame.payload.version === 2)!;
    expect(client.frames.indexOf(halted[0]!)).toBeLessThan(client.frames.indexOf(splice));

    setup.call.releaseAll();
    const { completed } = await completion(client, threadId, branch.assistantNodeId);
    expect(completed.finalContentLength).toBe('New answer'.length);
    const firstNewChunk = client
      .all('CPP_STREAM_CHUNK')
      .find((frame) => frame.payload.nodeId === branch.assistantNodeId)!;
    expect(client.frames.indexOf(firstNewChunk)).toBeGreaterThan(client.frames.indexOf(splice));
    expect(chunksOf(client, assistantNodeId)).toHaveLength(3);
    expect(client.all('CPP_GRAPH_PATCH').map((frame) => frame.payload.version)).toEqual([1, 2, 3]);
    const sync = await requestSync(client, threadId);
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello world' });
    expect(sync.activeHeadMessageId).toBe(branch.assistantNodeId);
  });

  it("sends CPP_STREAM_HALTED before it aborts the model call: the call's teardown does not delay the halt", async () => {
    const sent: string[] = [];
    const setup = await startStreamingThread(fixture, ['Hello', ' world', ' and more'], 2, {
      observers: [{ frameSent: (_connection, frame) => sent.push(frame) }],
    });
    let sentAtAbort: string[] | undefined;
    setup.call.signal.addEventListener('abort', () => (sentAtAbort = [...sent]));
    await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead');
    expect(sentAtAbort?.some((frame) => frame.includes('"CPP_STREAM_HALTED"'))).toBe(true);
  });

  describe('cuts at receivedContentLength, never inside a surrogate pair', () => {
    // Sent: "ab" + "😀😀" + "c"; each emoji is two UTF-16 code units.
    const cases = [
      { received: 0, content: '', lastChunkReceived: '' },
      { received: 1, content: 'a', lastChunkReceived: 'a' },
      { received: 3, content: 'ab', lastChunkReceived: 'ab' },
      { received: 4, content: 'ab😀', lastChunkReceived: '😀' },
      { received: 5, content: 'ab😀', lastChunkReceived: '😀' },
      { received: 6, content: 'ab😀😀', lastChunkReceived: '😀😀' },
      { received: 7, content: 'ab😀😀c', lastChunkReceived: 'c' },
      { received: 1000, content: 'ab😀😀c', lastChunkReceived: 'c' },
    ];
    for (const { received, content, lastChunkReceived } of cases) {
      it(`receivedContentLength ${received} keeps ${JSON.stringify(content)}`, async () => {
        const setup = await streaming(['ab', '😀😀', 'c', 'd'], 3);
        const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Stop there', {
          receivedContentLength: received,
        });
        const [halted] = setup.client.all('CPP_STREAM_HALTED');
        expect(halted?.payload).toMatchObject({ finalContentLength: content.length, lastChunkReceived });
        expect(branch.update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content });
        expect((await requestSync(setup.client, setup.threadId)).nodes[setup.assistantNodeId]?.content).toBe(content);
      });
    }
  });

  it('creates nothing on an exact retry, even with its now stale expectedVersion, answering the sender with CPP_SYNC_GRAPH', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    const retried = { newBranchNodeId: newMessageId(), expectedVersion: 1 };
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead', retried);
    sendPivot(setup, retried);
    const sync = (await setup.client.next('CPP_SYNC_GRAPH')).payload;
    expect(sync.nodes[setup.assistantNodeId]?.childrenIds).toEqual([branch.userNodeId]);
    expect(Object.keys(sync.nodes)).toHaveLength(4);
    expect(setup.client.all('CPP_STREAM_HALTED')).toHaveLength(1);
  });

  it('is refused with CONFLICT for a used newBranchNodeId with another prompt, and the stream goes on', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    sendPivot(setup, { newBranchNodeId: setup.userNodeId, userPrompt: 'Tell me about Clojure' });
    await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'pivot-frame', refType: 'CPP_PIVOT_INIT' });
    await expectStillStreaming(setup);
  });

  it('is refused with CONFLICT for a newBranchNodeId used in another thread, and the stream goes on', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    const other = (await openThread(setup.client, { patches: true })).threadId;
    const elsewhere = await prompt(setup.client, other, 'Elsewhere');
    sendPivot(setup, { newBranchNodeId: elsewhere.userNodeId, userPrompt: 'Elsewhere' });
    await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'pivot-frame' });
    await expectStillStreaming(setup);
  });

  it('is refused with CONFLICT for a stale expectedVersion, and the stream goes on', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    sendPivot(setup, { expectedVersion: 0 });
    await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'pivot-frame' });
    await expectStillStreaming(setup);
  });

  it('accepts a current expectedVersion', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Go on', { expectedVersion: 1 });
    expect(branch.update.version).toBe(2);
  });

  it('is refused with NOT_FOUND for a node not in the thread, and the stream goes on', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    sendPivot(setup, { interruptedNodeId: newMessageId() });
    await expectError(setup.client, ErrorCode.NOT_FOUND, { refId: 'pivot-frame' });
    await expectStillStreaming(setup);
  });
});

describe('CPP_PIVOT_INIT on a node that is not streaming', () => {
  it('branches under a completed node with no halt', async () => {
    const setup = await streaming(['Done.'], 0);
    setup.call.releaseAll();
    await completion(setup.client, setup.threadId, setup.assistantNodeId);
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'And then?', {
      receivedContentLength: 2,
    });
    expect(setup.client.all('CPP_STREAM_HALTED')).toEqual([]);
    expect(branch.update.version).toBe(3);
    expect(branch.update.activeHeadMessageId).toBe(branch.assistantNodeId);
    expect(branch.update.nodes[setup.assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Done.',
      childrenIds: [branch.userNodeId],
    });
    await completion(setup.client, setup.threadId, branch.assistantNodeId);
  });

  it('branches under a user node with no halt', async () => {
    const setup = await streaming(['Done.'], 0);
    setup.call.releaseAll();
    await completion(setup.client, setup.threadId, setup.assistantNodeId);
    const branch = await pivot(setup.client, setup.threadId, setup.userNodeId, 'Rephrased');
    expect(setup.client.all('CPP_STREAM_HALTED')).toEqual([]);
    expect(branch.update.nodes[setup.userNodeId]?.childrenIds).toEqual([setup.assistantNodeId, branch.userNodeId]);
  });

  it('is refused with THREAD_BUSY while another node of the thread streams, changing nothing', async () => {
    const setup = await streaming(['Hello', ' world'], 1);
    const before = await requestSync(setup.client, setup.threadId);
    sendPivot(setup, { interruptedNodeId: setup.userNodeId });
    const busy = await expectError(setup.client, ErrorCode.THREAD_BUSY, { refId: 'pivot-frame' });
    expect(busy.message).toContain(setup.assistantNodeId);
    expect(await requestSync(setup.client, setup.threadId)).toEqual(before);
    await expectStillStreaming(setup);
  });
});

describe('two subscribers', () => {
  it('both get the halt and the splice', async () => {
    const setup = await streaming(['Hello', ' world', '!'], 2);
    const other = await fixture.connect();
    await openThread(other, { threadId: setup.threadId });
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Switch');
    const halted = await other.next('CPP_STREAM_HALTED');
    expect(halted.payload).toEqual(setup.client.all('CPP_STREAM_HALTED')[0]!.payload);
    const update = await nextUpdate(
      other,
      setup.threadId,
      (candidate) => candidate.nodes[branch.userNodeId] !== undefined,
    );
    expect(update.activeHeadMessageId).toBe(branch.assistantNodeId);
    await listThreads(other);
  });
});
