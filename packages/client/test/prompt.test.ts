import { describe, expect, it } from 'vitest';
import { useFakeSession } from './support/session.js';

describe('CPPClient.prompt', () => {
  const session = useFakeSession();

  it('opens a thread when none is active, streams the answer and resolves when it completes', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const { result, threadId, userNodeId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    session.server.chunk(threadId, assistantNodeId, 'Spiking ');
    session.server.chunk(threadId, assistantNodeId, 'networks.');
    session.server.complete(threadId, assistantNodeId);

    expect(await result).toEqual({
      threadId,
      userNodeId,
      assistantNodeId,
      content: 'Spiking networks.',
      status: 'completed',
      finishReason: 'stop',
    });
    expect(deltas).toEqual(['Spiking ', 'networks.']);
    expect(session.server.received[0]).toMatchObject({ type: 'CPP_THREAD_OPEN', payload: { threadId, patches: true } });
    expect(session.server.framesOf('CPP_PROMPT')[0]?.payload).toEqual({
      activeThreadId: threadId,
      userPrompt: 'Explain spiking neural networks.',
      newNodeId: userNodeId,
    });
    expect(client.activeThreadId).toBe(threadId);
  });

  it('keeps a mirror equal to the server graph, announcing each change', async () => {
    const client = session.connect();
    const changes: number[] = [];
    client.on('graph', ({ graph }) => changes.push(graph.version));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Text');
    session.server.complete(threadId, assistantNodeId);
    await result;
    await client.requestSync();

    expect(client.graph()).toEqual(session.server.graph(threadId));
    // open (sync), prompt (patch), chunk, completion (patch), requested sync
    expect(changes).toEqual([0, 1, 1, 2, 2]);
  });

  it('learns the assistant node from full syncs when patches are turned off', async () => {
    const client = session.connect({ patches: false });
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Whole graphs.');
    session.server.complete(threadId, assistantNodeId);

    expect(await result).toMatchObject({ assistantNodeId, content: 'Whole graphs.', status: 'completed' });
    expect(session.server.received[0]?.payload).toEqual({ threadId, patches: false, presence: true });
  });

  it('sends parentNodeId and expectedVersion when given', async () => {
    const client = session.connect();
    const first = await session.startPrompt(client);
    session.server.complete(first.threadId, first.assistantNodeId);
    await first.result;
    const second = await session.startPrompt(client, { parentNodeId: first.userNodeId, expectedVersion: 2 });

    expect(session.server.framesOf('CPP_PROMPT')[1]?.payload).toMatchObject({
      parentNodeId: first.userNodeId,
      expectedVersion: 2,
    });
    expect(client.graph()?.nodes[second.userNodeId]?.parentId).toBe(first.userNodeId);
  });

  it('reports the node that streams, and settles once the mirror shows it finished', async () => {
    const client = session.connect();
    const { threadId, assistantNodeId, result } = await session.startPrompt(client);
    expect(client.streamingNode()?.id).toBe(assistantNodeId);
    session.server.complete(threadId, assistantNodeId);
    await result;
    expect(client.streamingNode()).toBeUndefined();
    expect(client.graph()?.nodes[assistantNodeId]?.status).toBe('completed');
  });
});
