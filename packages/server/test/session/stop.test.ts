import { ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { chunksOf, completion, expectError, nextUpdate, prompt, requestSync } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread, type StreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

function sendStop(setup: StreamingThread, nodeId: string, fields: Record<string, unknown> = {}): void {
  setup.client.send('CPP_STREAM_STOP', { activeThreadId: setup.threadId, nodeId, ...fields }, { id: 'stop-frame' });
}

describe('CPP_STREAM_STOP on the streaming node', () => {
  it('aborts the model call, halts with reason stop after the last chunk, and keeps the node as interrupted with the head unmoved', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world', '!'], 2);
    const { client, threadId, assistantNodeId } = setup;
    sendStop(setup, assistantNodeId);
    const halted = await client.next('CPP_STREAM_HALTED');
    expect(halted.payload).toEqual({
      interruptedNodeId: assistantNodeId,
      finalContentLength: 11,
      lastChunkReceived: ' world',
      threadId,
      reason: 'stop',
    });
    expect(setup.call.signal.aborted).toBe(true);

    const update = await nextUpdate(client, threadId);
    expect(update).toEqual({
      threadId,
      version: 2,
      rootNodeId: setup.userNodeId,
      activeHeadMessageId: assistantNodeId,
      nodes: {
        [assistantNodeId]: expect.objectContaining({ status: 'interrupted', content: 'Hello world', childrenIds: [] }),
      },
      title: expect.any(String),
    });
    setup.call.releaseAll();
    expect((await requestSync(client, threadId)).nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: 'Hello world',
    });
    expect(chunksOf(client, assistantNodeId)).toHaveLength(2);
    expect(client.all('CPP_STREAM_COMPLETED')).toEqual([]);
  });

  it('cuts at receivedContentLength', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world', '!'], 2);
    sendStop(setup, setup.assistantNodeId, { receivedContentLength: 7 });
    expect((await setup.client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
      finalContentLength: 7,
      lastChunkReceived: ' w',
    });
    expect((await nextUpdate(setup.client, setup.threadId)).nodes[setup.assistantNodeId]?.content).toBe('Hello w');
  });

  it('leaves the thread free: the next prompt grows from the interrupted answer', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world', '!'], 1);
    sendStop(setup, setup.assistantNodeId);
    await nextUpdate(setup.client, setup.threadId);
    const next = await prompt(setup.client, setup.threadId, 'Go on');
    expect(next.update.nodes[next.userNodeId]?.parentId).toBe(setup.assistantNodeId);
    await completion(setup.client, setup.threadId, next.assistantNodeId);
    expect(setup.model.calls[1]?.messages.map((message) => message.content)).toEqual([
      'Tell me about Clojure',
      'Hello',
      'Go on',
    ]);
  });
});

describe('CPP_STREAM_STOP on a node that is not streaming', () => {
  it('is refused with NOT_STREAMING for a completed, an interrupted or a user node, changing nothing', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const { client, threadId } = setup;
    sendStop(setup, setup.assistantNodeId);
    await nextUpdate(client, threadId, (update) => update.nodes[setup.assistantNodeId]?.status === 'interrupted');
    const completed = await prompt(client, threadId, 'Another');
    await completion(client, threadId, completed.assistantNodeId);
    const before = await requestSync(client, threadId);

    for (const nodeId of [completed.assistantNodeId, setup.assistantNodeId, setup.userNodeId]) {
      sendStop(setup, nodeId);
      await expectError(client, ErrorCode.NOT_STREAMING, { refId: 'stop-frame', refType: 'CPP_STREAM_STOP' });
    }
    expect(await requestSync(client, threadId)).toEqual(before);
  });

  it('is refused with NOT_STREAMING while another node streams, and that stream goes on', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    sendStop(setup, setup.userNodeId);
    await expectError(setup.client, ErrorCode.NOT_STREAMING);
    setup.call.releaseAll();
    await completion(setup.client, setup.threadId, setup.assistantNodeId);
    expect(setup.client.all('CPP_STREAM_HALTED')).toEqual([]);
  });
});
