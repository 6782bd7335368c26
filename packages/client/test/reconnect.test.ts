import { CPPClient, ConnectionClosedError, SendQueueFullError, type CPPClientOptions } from '@promethea/cpp-client';
import { applyChange, newMessageId, planPrompt } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { FakeServer } from './support/fake-server.js';
import { DID, mirrorUntil, useFakeSession } from './support/session.js';
import { recordStatuses } from './support/statuses.js';

/** Attempts a few milliseconds apart, so that tests wait for states rather than for the backoff. */
const FAST = { initialDelayMs: 5, maxDelayMs: 20 };

describe('CPPClient reconnecting', () => {
  const session = useFakeSession();
  const connect = (options: Partial<CPPClientOptions> = {}) => session.connect({ reconnect: FAST, ...options });

  /** Holds back the answer to the next CPP_THREAD_OPEN (the re-open after a reconnect) until `release` is called. */
  function holdNextOpen(): { release(): void } {
    let answer: (() => void) | undefined;
    session.server.handleOnce('CPP_THREAD_OPEN', (frame, peer) => (answer = () => session.server.answer(frame, peer)));
    return {
      release() {
        if (!answer) throw new Error('the re-open has not arrived');
        answer();
      },
    };
  }

  it('reports reconnecting after a lost connection, re-opens its threads, and reports open again', async () => {
    const client = connect();
    const statuses = recordStatuses(client);
    await client.openThread('thread_one');
    await client.openThread('thread_two');

    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');
    expect(client.status).toBe('reconnecting');
    await client.ready();
    expect(statuses.seen).toEqual(['open', 'reconnecting', 'open']);
    expect(session.server.peers).toHaveLength(2);
    expect(session.server.received.slice(2).map((frame) => [frame.type, frame.payload])).toEqual([
      ['CPP_THREAD_OPEN', { threadId: 'thread_one', patches: true, presence: true }],
      ['CPP_THREAD_OPEN', { threadId: 'thread_two', patches: true, presence: true }],
    ]);
  });

  it('drops, as deleted, a thread whose re-open is NOT_FOUND: deleted while the client was away', async () => {
    const client = connect();
    const errors: unknown[] = [];
    client.on('error', (error) => errors.push(error));
    await client.openThread('thread_gone');
    await client.openThread('thread_kept');
    const deleted = new Promise<string>((resolve) => client.once('threadDeleted', resolve));
    session.server.handleOnce('CPP_THREAD_OPEN', (frame, peer) =>
      session.server.send(peer, 'CPP_ERROR', {
        code: 'NOT_FOUND',
        message: 'thread thread_gone was deleted',
        refId: frame.id!,
        refType: 'CPP_THREAD_OPEN',
      }),
    );

    session.server.peers[0]!.terminate();
    expect(await deleted).toBe('thread_gone');
    await client.ready();
    expect(client.graph('thread_gone')).toBeUndefined();
    expect(client.graph('thread_kept')).toBeDefined();
    expect(errors).toEqual([]);
  });

  it.each([1001, 4408, 4429])('reconnects after the server closes with %i', async (code) => {
    const client = connect();
    const statuses = recordStatuses(client);
    await client.openThread('thread_code');
    session.server.peers[0]!.close(code, 'come back later');
    await statuses.reached('open', 2);
    expect(statuses.seen).toEqual(['open', 'reconnecting', 'open']);
  });

  it.each([1000, 4401, 4403, 4500])('does not reconnect after the server closes with %i', async (code) => {
    const client = connect();
    const statuses = recordStatuses(client);
    await client.openThread('thread_final');
    session.server.peers[0]!.close(code, 'final');
    await statuses.reached('closed');
    expect(statuses.seen).toEqual(['open', 'closed']);
    await expect(client.listThreads()).rejects.toMatchObject({ code });
  });

  it('resumes a stream from the sync it gets on reconnect: no text twice, none missing', async () => {
    const client = connect();
    const statuses = recordStatuses(client);
    const deltas: string[] = [];
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    session.server.chunk(threadId, assistantNodeId, 'Spiking ');
    await mirrorUntil(client, threadId, (graph) => graph.nodes[assistantNodeId]?.content === 'Spiking ');

    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');
    // Sent while the client is away: it reaches nobody, and comes back in the sync of the re-open.
    session.server.chunk(threadId, assistantNodeId, 'neural ');
    await statuses.reached('open', 2);
    session.server.chunk(threadId, assistantNodeId, 'networks');
    session.server.complete(threadId, assistantNodeId);

    await expect(result).resolves.toMatchObject({ status: 'completed', content: 'Spiking neural networks' });
    expect(deltas.join('')).toBe('Spiking neural networks');
    expect(session.server.framesOf('CPP_PROMPT')).toHaveLength(1);
  });

  it('holds a frame made while reconnecting and sends it once, after its threads are open again', async () => {
    const client = connect();
    const statuses = recordStatuses(client);
    await client.openThread('thread_held');
    const reopen = holdNextOpen();
    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');

    const answer = client.prompt({ userPrompt: 'Made while away' });
    await session.server.frame('CPP_THREAD_OPEN', 2);
    expect(session.server.framesOf('CPP_PROMPT')).toEqual([]);
    reopen.release();
    await session.server.frame('CPP_PROMPT');
    expect(session.server.received.map((frame) => frame.type)).toEqual([
      'CPP_THREAD_OPEN',
      'CPP_THREAD_OPEN',
      'CPP_PROMPT',
    ]);

    const nodeId = session.server.streaming('thread_held');
    session.server.chunk('thread_held', nodeId, 'Welcome back');
    session.server.complete('thread_held', nodeId);
    await expect(answer).resolves.toMatchObject({ status: 'completed', content: 'Welcome back' });
  });

  it('sends a prompt again, with the same ids, when the connection dropped before the server took it', async () => {
    const client = connect();
    await client.openThread('thread_resend');
    session.server.handleOnce('CPP_PROMPT', (_frame, peer) => peer.terminate());
    const answer = client.prompt({ userPrompt: 'Lost on the way' });

    const resent = await session.server.frame('CPP_PROMPT', 2);
    const first = session.server.framesOf('CPP_PROMPT')[0]!;
    expect(resent.id).toBe(first.id);
    expect(resent.payload).toEqual(first.payload);
    const nodeId = session.server.streaming('thread_resend');
    session.server.chunk('thread_resend', nodeId, 'Found');
    session.server.complete('thread_resend', nodeId);
    await expect(answer).resolves.toMatchObject({
      status: 'completed',
      content: 'Found',
      userNodeId: first.payload.newNodeId,
    });
  });

  it('does not send a prompt again when the re-opened thread shows the server carried it out', async () => {
    const client = connect();
    const statuses = recordStatuses(client);
    await client.openThread('thread_done');
    // The server takes the prompt, but the connection drops before the client hears of it.
    session.server.handleOnce('CPP_PROMPT', (frame, peer) => {
      const graph = session.server.graph('thread_done');
      const { userPrompt, newNodeId: userNodeId } = frame.payload;
      applyChange(
        graph,
        planPrompt(graph, { userPrompt, userNodeId, assistantNodeId: newMessageId(), createdAt: Date.now() }),
      );
      peer.terminate();
    });
    const answer = client.prompt({ userPrompt: 'Taken, then lost' });
    await statuses.reached('open', 2);

    const nodeId = session.server.streaming('thread_done');
    session.server.chunk('thread_done', nodeId, 'Kept');
    session.server.complete('thread_done', nodeId);
    await expect(answer).resolves.toMatchObject({ status: 'completed', content: 'Kept' });
    expect(session.server.framesOf('CPP_PROMPT')).toHaveLength(1);
  });

  it('pivots while reconnecting at what the person saw, although the re-sync brings more of the answer', async () => {
    const client = connect();
    const statuses = recordStatuses(client);
    const deltas: string[] = [];
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    session.server.chunk(threadId, assistantNodeId, 'Seen');
    await mirrorUntil(client, threadId, (graph) => graph.nodes[assistantNodeId]?.content === 'Seen');
    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');
    session.server.chunk(threadId, assistantNodeId, ' but not shown');

    const pivot = client.pivot({ userPrompt: 'Rust instead' });
    const sent = await session.server.frame('CPP_PIVOT_INIT');
    expect(sent.payload).toMatchObject({ interruptedNodeId: assistantNodeId, receivedContentLength: 4 });
    await expect(result).resolves.toMatchObject({ status: 'interrupted', content: 'Seen' });
    expect(deltas.join('')).toBe('Seen');

    const branchNodeId = session.server.streaming(threadId);
    session.server.chunk(threadId, branchNodeId, 'Sure');
    session.server.complete(threadId, branchNodeId);
    await expect(pivot).resolves.toMatchObject({ status: 'completed', content: 'Sure' });
  });

  it('lets at most maxQueuedFrames frames wait while reconnecting, and refuses more with SendQueueFullError', async () => {
    const client = connect({ maxQueuedFrames: 2 });
    const statuses = recordStatuses(client);
    await client.openThread('thread_queue');
    const reopen = holdNextOpen();
    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');

    const waiting = [client.listThreads(), client.listThreads()];
    const refused = await client.listThreads().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SendQueueFullError);
    expect(refused).toMatchObject({ limit: 2 });
    await session.server.frame('CPP_THREAD_OPEN', 2);
    reopen.release();
    await expect(Promise.all(waiting)).resolves.toHaveLength(2);
    expect(session.server.framesOf('CPP_THREAD_LIST')).toHaveLength(2);
  });

  it('closes for good on a lost connection when reconnect is false', async () => {
    const client = session.connect({ reconnect: false });
    const statuses = recordStatuses(client);
    await client.openThread('thread_once');
    session.server.handle('CPP_THREAD_LIST', () => undefined);
    const listing = client.listThreads();
    await session.server.frame('CPP_THREAD_LIST');
    session.server.peers[0]!.terminate();
    await expect(listing).rejects.toMatchObject({ code: 1006 });
    expect(statuses.seen).toEqual(['open', 'closed']);
    expect(session.server.peers).toHaveLength(1);
  });

  it('stops reconnecting when closed while it waits for the next attempt', async () => {
    const client = connect({ reconnect: { initialDelayMs: 60_000 } });
    const statuses = recordStatuses(client);
    await client.openThread('thread_wait');
    session.server.peers[0]!.terminate();
    await statuses.reached('reconnecting');
    const waiting = client.listThreads();
    await client.close();
    expect(statuses.seen).toEqual(['open', 'reconnecting', 'closed']);
    await expect(waiting).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(session.server.peers).toHaveLength(1);
  });
});

describe('CPPClient giving up', () => {
  it('gives up after maxAttempts failed attempts: closed, and what waited is rejected', async () => {
    const server = await FakeServer.start();
    const client = new CPPClient({ endpoint: server.url, did: DID, reconnect: { ...FAST, maxAttempts: 2 } });
    const statuses = recordStatuses(client);
    await client.openThread('thread_gone');
    await server.close();
    await statuses.reached('reconnecting');
    const waiting = client.listThreads();
    await statuses.reached('closed');
    await expect(waiting).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(statuses.seen).toEqual(['open', 'reconnecting', 'closed']);
  });
});
