import { CPPClient, ConnectionClosedError, DidKeyIdentity, type CPPClientOptions } from '@promethea/cpp-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BlackHole } from './support/black-hole.js';
import { SHORT_ANSWERS, useRealServer } from './support/real-server.js';
import { DID } from './support/session.js';
import { recordStatuses } from './support/statuses.js';
import { TcpProxy } from './support/tcp-proxy.js';

const CONNECT_TIMEOUT_MS = 200;
const GAVE_UP = { code: 1006, reason: 'the server did not answer the upgrade in time' };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  // A test that faked the client's clock gives it back first: what the test opened closes on the real one.
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function blackHole(): Promise<BlackHole> {
  const hole = await BlackHole.start();
  cleanups.push(() => hole.close());
  return hole;
}

describe('a client whose upgrade is never answered', () => {
  it.each<[string, Partial<CPPClientOptions>]>([
    ['a claimed DID', { did: DID }],
    ['an identity', { identity: DidKeyIdentity.generate() }],
  ])('with %s, gives up on a first connection after connectTimeoutMs and rejects what waits', async (_, identity) => {
    const hole = await blackHole();
    // The client's clock only: the sockets are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const client = new CPPClient({ endpoint: hole.url, connectTimeoutMs: CONNECT_TIMEOUT_MS, ...identity });
    cleanups.push(() => client.close());
    const listing = client.listThreads();
    const failure = client.ready().catch((error: unknown) => error);
    await hole.until((it) => it.accepted === 1);

    vi.advanceTimersByTime(CONNECT_TIMEOUT_MS - 1);
    expect(client.status).toBe('connecting');
    vi.advanceTimersByTime(1);
    expect(client.status).toBe('closed');
    expect(await failure).toBeInstanceOf(ConnectionClosedError);
    expect(await failure).toMatchObject(GAVE_UP);
    await expect(listing).rejects.toMatchObject(GAVE_UP);
    await hole.until((it) => it.open === 0);
    expect(hole.accepted).toBe(1);
  });

  describe('after a lost connection', () => {
    const real = useRealServer();

    it('abandons each unanswered attempt and retries, until a server answers again', async () => {
      const server = await real.start(SHORT_ANSWERS);
      const proxy = await TcpProxy.start(server.port);
      cleanups.push(() => proxy.close());
      const hole = await blackHole();
      const client = real.connect(server, DID, {
        endpoint: `ws://127.0.0.1:${proxy.port}`,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
      });
      const statuses = recordStatuses(client);
      const { threadId } = await client.openThread();

      proxy.targetPort = hole.port;
      proxy.cutOne();
      await hole.until((it) => it.accepted >= 3);
      expect(client.status).toBe('reconnecting');

      proxy.targetPort = server.port;
      await statuses.reached('open', 2);
      expect(statuses.seen).toEqual(['open', 'reconnecting', 'open']);
      await expect(client.requestSync(threadId)).resolves.toMatchObject({ threadId });
      await hole.until((it) => it.open === 0);
    });
  });
});
