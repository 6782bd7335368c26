import { describe, expect, it } from 'vitest';
import { contentOf, mirrorUntil, useFakeSession } from './support/session.js';

describe('CPPClient mirror', () => {
  const session = useFakeSession();

  it('never applies a resent chunk twice', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const chunks: string[] = [];
    client.on('chunk', (chunk) => chunks.push(chunk.delta));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    const peer = session.server.peers[0]!;
    session.server.chunk(threadId, assistantNodeId, 'abc');
    session.server.send(peer, 'CPP_STREAM_CHUNK', { threadId, nodeId: assistantNodeId, offset: 0, delta: 'abc' });
    session.server.send(peer, 'CPP_STREAM_CHUNK', { threadId, nodeId: assistantNodeId, offset: 1, delta: 'bc' });
    session.server.chunk(threadId, assistantNodeId, 'd');
    session.server.complete(threadId, assistantNodeId);

    expect((await result).content).toBe('abcd');
    expect(deltas.join('')).toBe('abcd');
    expect(chunks).toEqual(['abc', 'd']);
    expect(client.graph(threadId)).toEqual(session.server.graph(threadId));
    expect(session.server.framesOf('CPP_SYNC_REQUEST')).toEqual([]);
  });

  it('asks for one full sync when a chunk reveals missing text, and recovers exactly', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    // Text the client never receives: the next chunks start past the end of its copy.
    session.server.graph(threadId).nodes[assistantNodeId]!.content += 'lost ';
    session.server.chunk(threadId, assistantNodeId, 'and ');
    session.server.chunk(threadId, assistantNodeId, 'found');
    await session.server.frame('CPP_SYNC_REQUEST');
    session.server.chunk(threadId, assistantNodeId, '.');
    session.server.complete(threadId, assistantNodeId);

    expect((await result).content).toBe('lost and found.');
    expect(deltas.join('')).toBe('lost and found.');
    expect(client.graph(threadId)).toEqual(session.server.graph(threadId));
    expect(session.server.framesOf('CPP_SYNC_REQUEST')).toHaveLength(1);
  });

  it('asks for a full sync when a patch skips a version', async () => {
    const client = session.connect();
    const { result, threadId, userNodeId, assistantNodeId } = await session.startPrompt(client);
    session.server.complete(threadId, assistantNodeId);
    await result;
    // A change the client never hears of.
    session.server.graph(threadId).version += 1;
    const graph = await client.anchor(userNodeId);

    expect(session.server.framesOf('CPP_SYNC_REQUEST')).toHaveLength(1);
    expect(graph).toEqual(session.server.graph(threadId));
  });

  it('ignores a patch it already has', async () => {
    const client = session.connect();
    const graph = await client.openThread();
    const peer = session.server.peers[0]!;
    session.server.send(peer, 'CPP_GRAPH_PATCH', {
      threadId: graph.threadId,
      version: 0,
      rootNodeId: 'msg_stale',
      activeHeadMessageId: null,
      nodes: {},
    });
    // A round trip that leaves the mirror alone: the patch has been handled once it returns.
    await client.listThreads();
    expect(client.graph()).toEqual(session.server.graph(graph.threadId));
    expect(session.server.framesOf('CPP_SYNC_REQUEST')).toEqual([]);
  });

  it('cuts a halted node to the length the server kept', async () => {
    const client = session.connect();
    const halts: number[] = [];
    client.on('halted', (halted) => halts.push(halted.finalContentLength));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Seen by the user, then more');
    await mirrorUntil(
      client,
      threadId,
      () => contentOf(client, threadId, assistantNodeId) === 'Seen by the user, then more',
    );
    await client.stop({ receivedContentLength: 16 });

    expect(await result).toMatchObject({ status: 'interrupted', content: 'Seen by the user' });
    expect(halts).toEqual([16]);
    expect(client.graph(threadId)).toEqual(session.server.graph(threadId));
  });

  it('keeps the same graph object across syncs', async () => {
    const client = session.connect();
    const opened = await client.openThread();
    const synced = await client.requestSync();
    expect(synced).toBe(opened);
    expect(client.graph()).toBe(opened);
  });
});
