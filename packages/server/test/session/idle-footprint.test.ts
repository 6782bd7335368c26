import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ThreadEngine } from '../../src/engine/thread-engine.js';
import { ConnectionSession } from '../../src/session/connection-session.js';
import { listThreads, openThread } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** The sessions that have sent something: how a test reaches the server's own objects. */
function watchSessions(): () => ConnectionSession[] {
  const send = vi.spyOn(ConnectionSession.prototype, 'send');
  return () => [...new Set(send.mock.contexts as ConnectionSession[])];
}

afterEach(() => {
  vi.restoreAllMocks();
});

// What an idle connection holds is multiplied by every connection a server keeps open (issue 20): what all of them
// need alike is made once per server, and what only a busy connection needs is made when it is needed.
describe('an idle connection', () => {
  it('shares its server’s session dependencies and guard settings with every other connection', async () => {
    const sessions = watchSessions();
    await listThreads(await fixture.connect());
    await listThreads(await fixture.connect());
    const [first, second] = sessions();
    expect(first).toBeDefined();
    expect(second).not.toBe(first);
    expect(second!['dependencies']).toBe(first!['dependencies']);
    expect(second!['guard']['settings']).toBe(first!['guard']['settings']);
  });

  it('holds its socket’s methods on a prototype, not as closures of its own', async () => {
    const sessions = watchSessions();
    await listThreads(await fixture.connect());
    const socket = sessions()[0]!['socket'];
    expect(Object.values(socket).filter((value) => typeof value === 'function')).toEqual([]);
  });

  it('holds no set of threads, nor of frames being applied, while it has none', async () => {
    const sessions = watchSessions();
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const [session] = sessions();
    expect(session!['threads']).toEqual(new Set([expect.anything()]));
    client.send('CPP_THREAD_CLOSE', { threadId });
    await listThreads(client);
    expect(session!['threads']).toBeUndefined();
    expect(session!['applying']).toBeUndefined();
  });

  it('shares the heartbeat’s and the message clock’s listeners on its socket with every other connection', async () => {
    const sessions = watchSessions();
    await fixture.start({ heartbeatIntervalMs: 60_000, limits: { messageTimeoutMs: 60_000 } });
    await listThreads(await fixture.connect());
    await listThreads(await fixture.connect());
    // The ws adapter's socket (`WsCppSocket`) behind the session's CPPSocket.
    const [first, second] = sessions().map(
      (session) => (session['socket'] as unknown as { webSocket: WebSocket }).webSocket,
    );
    expect(second).not.toBe(first);
    expect(second!.listeners('pong')).toEqual(first!.listeners('pong'));
    const stream = (webSocket: WebSocket) => (webSocket as unknown as { _socket: Duplex })._socket;
    expect(stream(second!).listeners('data')).toEqual(stream(first!).listeners('data'));
    const ours = (webSocket: WebSocket) =>
      webSocket.listeners('close').filter((listener) => second!.listeners('close').includes(listener));
    expect(ours(first!)).toHaveLength(2);
  });

  it('has no map of chunks to merge until one waits behind a slow reader', async () => {
    const sessions = watchSessions();
    await listThreads(await fixture.connect());
    expect(sessions()[0]!['outbound']['open']).toBeUndefined();
  });
});

describe('an open empty thread', () => {
  /** The engine of the thread each connection opened. */
  const enginesOf = (sessions: ConnectionSession[]) =>
    sessions.map((session) => [...(session['threads'] as Set<ThreadEngine>)][0]!);

  it('shares its server’s engine dependencies with every other open thread', async () => {
    const sessions = watchSessions();
    await openThread(await fixture.connect());
    await openThread(await fixture.connect());
    const [first, second] = enginesOf(sessions());
    expect(second).not.toBe(first);
    expect(second!['dependencies']).toBe(first!['dependencies']);
  });

  it('has no map of closes waiting for their turn and no catch-up with other servers until one is needed', async () => {
    const sessions = watchSessions();
    await openThread(await fixture.connect());
    const [engine] = enginesOf(sessions());
    expect(engine!['leaving']).toBeUndefined();
    expect(engine!['catchUp']).toBeUndefined();
  });

  it('keeps no copy of its sync frame, which is built again in microseconds', async () => {
    const sessions = watchSessions();
    await openThread(await fixture.connect());
    const [engine] = enginesOf(sessions());
    expect(engine!['fanout']['syncs']['frame']).toBe('');
  });
});
