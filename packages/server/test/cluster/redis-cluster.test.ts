import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { RedisClusterTransport } from '../../src/cluster/redis-cluster.js';
import { deleteRedisKeys, describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { eventually, WAIT_LIMIT_MS } from '../support/eventually.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeWithRedis('RedisClusterTransport', () => {
  describeClusterTransportContract('RedisClusterTransport', async () => {
    const prefix = uniqueRedisPrefix();
    return {
      join: () => RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }),
      cleanup: () => deleteRedisKeys(prefix),
    };
  });

  const prefix = uniqueRedisPrefix();
  const opened: Array<{ close(): Promise<void> | void }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0)) await resource.close();
    await deleteRedisKeys(prefix);
  });

  it('tells its instance when its subscriber connection is back after a cut, since messages published meanwhile are lost', async () => {
    const transport = await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix });
    opened.push(transport);
    let reconnected!: () => void;
    const reconnection = new Promise<void>((resolve) => (reconnected = resolve));
    await transport.start({
      command: async () => ({ ok: true, retried: false, version: 1 }),
      error: () => {},
      reconnected: () => reconnected(),
    });
    let delivered!: (frame: string) => void;
    const received = new Promise<string>((resolve) => (delivered = resolve));
    await transport.subscribe('thread_cut', (message) => delivered('frame' in message ? message.frame : ''));
    const admin = new Redis(TEST_REDIS_URL);
    opened.push({ close: () => admin.disconnect() });

    const clients = String(await admin.client('LIST'));
    const id = /id=(\d+) .*name=cpp-subscriber-(\S+)/.exec(
      clients.split('\n').find((line) => line.includes(`cpp-subscriber-${transport.instanceId}`)) ?? '',
    )?.[1];
    expect(id).toBeDefined();
    await admin.client('KILL', 'ID', id!);

    await reconnection;
    const publisher = await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix });
    opened.push(publisher);
    await publisher.start({
      command: async () => ({ ok: true, retried: false, version: 1 }),
      error: () => {},
      reconnected: () => {},
    });
    publisher.publish('thread_cut', { frame: 'after the cut' });
    // Delivered: subscribed again after the reconnection.
    expect(await received).toBe('after the cut');
  });

  it('closes while Redis is away, its connections waiting to reconnect, rather than waiting for Redis forever', async () => {
    const redis = await TcpProxy.start(TEST_REDIS_URL);
    opened.push(redis);
    const transport = await RedisClusterTransport.connect({ url: redis.url(TEST_REDIS_URL), prefix });
    await transport.start({
      command: async () => ({ ok: true, retried: false, version: 1 }),
      error: () => {},
      reconnected: () => {},
    });
    // Peeked at, not used: ioredis tells a connection's state only on the connection, which the transport keeps.
    const connections = transport as unknown as { redis: Redis; inbox: { reader: Redis } };

    await redis.cut();
    // Both wait to reconnect, the inbox's blocking read queued until they do: ioredis' disconnect() at that moment
    // settles nothing queued, and its quit() waits for a connection.
    await eventually(
      () =>
        connections.redis.status === 'reconnecting' && connections.inbox.reader.status === 'reconnecting'
          ? true
          : undefined,
      'the connections waiting to reconnect',
    );
    let closed = false;
    const closing = transport.close().then(() => (closed = true));
    // Redis stays away: close() must settle on its own. Bounded by the test's wait limit, not a sleep.
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, WAIT_LIMIT_MS))]);
    expect(closed).toBe(true);
  });

  it('lists orphaned generations at one moment: a lock released while it looks is not taken for one whose instance died', async () => {
    const [holder, sweeper] = await Promise.all([
      RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }),
      RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }),
    ]);
    opened.push(holder, sweeper);
    const token = (await holder.acquireLock('thread_live', 60_000))!;
    // Any read of the sweeper's that lists the registered generations lets the holder release its lock right after.
    const commands = (sweeper as unknown as { redis: Redis }).redis;
    const hkeys = commands.hkeys.bind(commands);
    vi.spyOn(commands, 'hkeys').mockImplementation((async (...args: Parameters<typeof hkeys>) => {
      const listed = await hkeys(...args);
      await holder.releaseLock('thread_live', token);
      return listed;
    }) as typeof hkeys);

    expect(await sweeper.orphanedGenerations()).not.toContain('thread_live');
    await holder.releaseLock('thread_live', token);
    expect(await sweeper.orphanedGenerations()).toEqual([]);
  });
});
