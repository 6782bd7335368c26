// @promethea/cpp-server/redis: loads ioredis, so the root import does not.
export { RedisClusterTransport, DEFAULT_REDIS_PREFIX, type RedisClusterOptions } from './cluster/redis-cluster.js';
