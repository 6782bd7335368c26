import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { RedisClusterTransport } from '../../src/cluster/redis-cluster.js';
import { deleteRedisKeys, describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeWithRedis('RedisClusterTransport', () => {
  describeClusterTransportContract('RedisClusterTransport', async () => {
    const prefix = uniqueRedisPrefix();
    return { join: () => RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }), cleanup: () => deleteRedisKeys(prefix) };
  });

  const prefix = uniqueRedisPrefix();
  const opened: Array<{ close(): Promise<void> | void }> = [];
  afterEach(async () => {
    for (const resource of opened.splice(0)) await resource.close();
    await deleteRedisKeys(prefix);
  });

  it('tells its node when its subscriber connection is back after a cut, since messages published meanwhile are lost', async () => {
    const transport = await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix });
    opened.push(transport);
    let reconnected!: () => void;
    const reconnection = new Promise<void>((resolve) => (reconnected = resolve));
    await transport.start({ command: async () => ({ ok: true, retried: false, version: 1 }), error: () => {}, reconnected: () => reconnected() });
    let delivered!: (frame: string) => void;
    const received = new Promise<string>((resolve) => (delivered = resolve));
    await transport.subscribe('thread_cut', (message) => delivered(message.frame));
    const admin = new Redis(TEST_REDIS_URL);
    opened.push({ close: () => admin.disconnect() });

    const clients = String(await admin.client('LIST'));
    const id = /id=(\d+) .*name=cpp-subscriber-(\S+)/.exec(clients.split('\n').find((line) => line.includes(`cpp-subscriber-${transport.instanceId}`)) ?? '')?.[1];
    expect(id).toBeDefined();
    await admin.client('KILL', 'ID', id!);

    await reconnection;
    const publisher = await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix });
    opened.push(publisher);
    await publisher.start({ command: async () => ({ ok: true, retried: false, version: 1 }), error: () => {}, reconnected: () => {} });
    publisher.publish('thread_cut', { frame: 'after the cut' });
    // Delivered: subscribed again after the reconnection.
    expect(await received).toBe('after the cut');
  });
});
