import { ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { contentOf, mirrorUntil, useFakeSession } from './support/session.js';

describe('CPPClient.stop', () => {
  const session = useFakeSession();

  it('halts the streaming node with what the client holds of it', async () => {
    const client = session.connect();
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Half an answer');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, assistantNodeId) === 'Half an answer');
    await client.stop();

    expect(session.server.framesOf('CPP_STREAM_STOP')[0]?.payload).toEqual({
      activeThreadId: threadId,
      nodeId: assistantNodeId,
      receivedContentLength: 14,
    });
    expect(client.streamingNode()).toBeUndefined();
    expect(await result).toMatchObject({ status: 'interrupted', content: 'Half an answer' });
  });

  it('never shows the stopped answer past the point where the user stopped it', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    session.server.chunk(threadId, assistantNodeId, 'Seen');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, assistantNodeId) === 'Seen');
    const stopped = client.stop();
    session.server.chunk(threadId, assistantNodeId, ' unseen');
    await stopped;

    expect(await result).toMatchObject({ status: 'interrupted', content: 'Seen' });
    expect(deltas).toEqual(['Seen']);
  });

  it('resolves at once, sending nothing, when nothing streams', async () => {
    const client = session.connect();
    await client.stop();
    await client.openThread();
    await client.stop();
    await client.listThreads();
    expect(session.server.received.map((frame) => frame.type)).toEqual(['CPP_THREAD_OPEN', 'CPP_THREAD_LIST']);
  });

  it('resolves when the node completed before the stop reached the server', async () => {
    const client = session.connect();
    const reported: unknown[] = [];
    client.on('error', (error) => reported.push(error));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.handle('CPP_STREAM_STOP', (frame, peer) => {
      session.server.send(peer, 'CPP_ERROR', {
        code: ErrorCode.NOT_STREAMING,
        message: 'already done',
        refId: frame.id!,
      });
      session.server.complete(threadId, assistantNodeId);
    });
    await client.stop();

    expect(await result).toMatchObject({ status: 'completed' });
    expect(reported).toEqual([]);
  });

  it('reports no error when the NOT_STREAMING answer comes after the stop already resolved', async () => {
    const client = session.connect();
    const reported: unknown[] = [];
    client.on('error', (error) => reported.push(error));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.handle('CPP_STREAM_STOP', (frame, peer) => {
      session.server.complete(threadId, assistantNodeId);
      session.server.send(peer, 'CPP_ERROR', {
        code: ErrorCode.NOT_STREAMING,
        message: 'already done',
        refId: frame.id!,
        refType: frame.type,
      });
    });
    await client.stop();
    expect(await result).toMatchObject({ status: 'completed' });
    // A round trip: the NOT_STREAMING, sent before its answer, has been handled.
    await client.listThreads();
    expect(reported).toEqual([]);
  });
});

describe('CPPClient.anchor', () => {
  const session = useFakeSession();

  it('moves the head, and the next prompt branches from there', async () => {
    const client = session.connect();
    const first = await session.startPrompt(client);
    session.server.complete(first.threadId, first.assistantNodeId);
    await first.result;
    const second = await session.startPrompt(client);
    session.server.complete(second.threadId, second.assistantNodeId);
    await second.result;

    const anchored = await client.anchor(first.assistantNodeId, { expectedVersion: 4 });
    expect(anchored.activeHeadMessageId).toBe(first.assistantNodeId);
    expect(session.server.framesOf('CPP_ANCHOR_HEAD')[0]?.payload).toEqual({
      activeThreadId: first.threadId,
      targetNodeId: first.assistantNodeId,
      expectedVersion: 4,
    });
    const third = await session.startPrompt(client);
    expect(client.graph()?.nodes[third.userNodeId]?.parentId).toBe(first.assistantNodeId);
    expect(client.graph()?.nodes[first.assistantNodeId]?.childrenIds).toEqual([second.userNodeId, third.userNodeId]);
  });
});
