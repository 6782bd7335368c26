import { ThreadClosedError } from '@promethea/cpp-client';
import type { ServerFrame } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDLESS_ANSWERS, SHORT_ANSWERS, useRealServer } from '../support/real-server.js';
import { recordingWebSocket } from '../support/recording-socket.js';
import { DID, mirrorUntil } from '../support/session.js';
import { recordStatuses } from '../support/statuses.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const proxies: TcpProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

const threadOf = (frame: ServerFrame): string | undefined =>
  'threadId' in frame.payload ? frame.payload.threadId : undefined;

describe('CPPClient.closeThread against the real CPPServer', () => {
  const real = useRealServer();

  it('stops receiving the thread, drops its mirror and its requests, while another client still receives it', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const socket = recordingWebSocket();
    const alice = real.connect(server, DID, { WebSocket: socket.WebSocket });
    const bob = real.connect(server, 'did:key:z6MkTestClientBob');
    const { threadId } = await alice.openThread();
    const answer = alice.prompt({ userPrompt: 'Explain Clojure.' });
    await mirrorUntil(alice, threadId, () => (alice.streamingNode(threadId)?.content.length ?? 0) > 0);
    const nodeId = alice.streamingNode(threadId)!.id;
    await bob.openThread(threadId);

    await alice.closeThread();
    await expect(answer).rejects.toEqual(new ThreadClosedError(threadId));
    expect(alice.graph(threadId)).toBeUndefined();
    expect(alice.activeThreadId).toBeUndefined();

    await alice.listThreads();
    const afterClose = socket.received.length;
    const seen = bob.graph(threadId)!.nodes[nodeId]!.content.length;
    await mirrorUntil(bob, threadId, (mirror) => mirror.nodes[nodeId]!.content.length > seen + 100);
    await alice.listThreads();
    expect(socket.received.slice(afterClose).map((frame) => frame.type)).toEqual(['CPP_THREADS']);
    expect(alice.graph(threadId)).toBeUndefined();
  });

  it('ignores a sync of the thread that was on its way when it closed', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const socket = recordingWebSocket();
    const client = real.connect(server, DID, { WebSocket: socket.WebSocket });
    const { threadId } = await client.openThread();
    const syncs = () =>
      socket.received.filter((frame) => frame.type === 'CPP_SYNC_GRAPH' && threadOf(frame) === threadId).length;
    const before = syncs();

    const sync = client.requestSync(threadId);
    await client.closeThread(threadId);
    await expect(sync).rejects.toBeInstanceOf(ThreadClosedError);
    while (syncs() === before) await client.listThreads();
    expect(client.graph(threadId)).toBeUndefined();
  });

  it('is not opened again after a reconnect, while the threads still open are', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const proxy = await TcpProxy.start(server.port);
    proxies.push(proxy);
    const socket = recordingWebSocket();
    const client = real.connect(server, DID, {
      endpoint: `ws://127.0.0.1:${proxy.port}`,
      reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
      WebSocket: socket.WebSocket,
    });
    const statuses = recordStatuses(client);
    const kept = await client.openThread();
    const closed = await client.openThread();
    await client.closeThread(closed.threadId);

    const beforeCut = socket.received.length;
    expect(proxy.cutOne()).toBe(true);
    await statuses.reached('open', 2);
    const synced = socket.received
      .slice(beforeCut)
      .filter((frame) => frame.type === 'CPP_SYNC_GRAPH')
      .map(threadOf);
    expect(synced).toEqual([kept.threadId]);
    expect(client.graph(closed.threadId)).toBeUndefined();
    await client.prompt({ userPrompt: 'Still here?', threadId: kept.threadId });
    expect(socket.received.slice(beforeCut).filter((frame) => threadOf(frame) === closed.threadId)).toEqual([]);
  });

  it('rejects when no thread is open', async () => {
    const server = await real.start(SHORT_ANSWERS);
    await expect(real.connect(server).closeThread()).rejects.toThrow(/no thread is open/);
  });
});
