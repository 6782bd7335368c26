import { CPPClient, ConnectionClosedError, DidKeyIdentity, type CPPClientOptions } from '@promethea/cpp-client';
import { afterEach, describe, expect, it } from 'vitest';
import { BlackHole } from './support/black-hole.js';
import { SHORT_ANSWERS, useRealServer } from './support/real-server.js';
import { DID } from './support/session.js';
import { recordStatuses } from './support/statuses.js';
import { TcpProxy } from './support/tcp-proxy.js';

const CONNECT_TIMEOUT_MS = 200;
const GAVE_UP = { code: 1006, reason: 'the server did not answer the upgrade in time' };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
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
  ])('with %s, gives up on a first connection after connectTimeoutMs and rejects what waits', { timeout: 5000 }, async (_, identity) => {
    const hole = await blackHole();
    const client = new CPPClient({ endpoint: hole.url, connectTimeoutMs: CONNECT_TIMEOUT_MS, ...identity });
    cleanups.push(() => client.close());
    const listing = client.listThreads();
    const started = Date.now();

    const failure = await client.ready().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConnectionClosedError);
    expect(failure).toMatchObject(GAVE_UP);
    expect(Date.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS * 5);
    await expect(listing).rejects.toMatchObject(GAVE_UP);
    expect(client.status).toBe('closed');
    await hole.until((it) => it.open === 0);
    expect(hole.accepted).toBe(1);
  });

  describe('after a lost connection', () => {
    const real = useRealServer();

    it('abandons each unanswered attempt and retries, until a server answers again', { timeout: 5000 }, async () => {
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
