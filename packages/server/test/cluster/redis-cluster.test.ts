import { RedisClusterTransport } from '../../src/cluster/redis-cluster.js';
import { deleteRedisKeys, describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeWithRedis('RedisClusterTransport', () => {
  describeClusterTransportContract('RedisClusterTransport', async () => {
    const prefix = uniqueRedisPrefix();
    return { join: () => RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }), cleanup: () => deleteRedisKeys(prefix) };
  });
});
