import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { RedisClusterTransport } from '../../src/cluster/redis-cluster.js';
import { deleteRedisKeys, describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
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
