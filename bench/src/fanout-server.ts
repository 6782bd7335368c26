import { CPPServer, type ConversationStore, MemoryStore } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { RedisClusterTransport } from '@promethea/cpp-server/redis';
import { serveRequests } from './bench-process.js';
import { PacedProvider } from './paced-provider.js';

/**
 * How a fan-out server is started: alone with its memory, or as one node of a cluster on PostgreSQL (the schema) and
 * Redis (the key and channel prefix), as deployed: each node in its own process, the other node's members getting each
 * chunk through Redis.
 */
export interface FanoutServerConfig {
  intervalMs: number;
  tokens: number;
  cluster?: { databaseUrl: string; schema: string; redisUrl: string; prefix: string };
}

export interface FanoutServerReady {
  port: number;
}

/** A hundred members and more connect from one address, as fast as they can, and the owner shares with each. */
const FANOUT_LIMITS = {
  maxConnectionsPerIp: 0,
  maxSocketsPerIp: 0,
  maxConnectionsPerDid: 0,
  framesPerSecond: 0,
  syncsPerMinute: 0,
  maxMembersPerThread: 0,
};

const config = JSON.parse(process.argv[2]!) as FanoutServerConfig;
const { cluster } = config;
const store: ConversationStore = cluster
  ? await PostgresStore.open({ connectionString: cluster.databaseUrl, schema: cluster.schema })
  : new MemoryStore();
const server = new CPPServer({
  port: 0,
  host: '127.0.0.1',
  store,
  model: new PacedProvider(config.intervalMs, config.tokens),
  auth: 'did-key',
  limits: FANOUT_LIMITS,
  ...(cluster
    ? { cluster: await RedisClusterTransport.connect({ url: cluster.redisUrl, prefix: cluster.prefix }) }
    : {}),
});
await server.ready;

serveRequests({ port: server.port } satisfies FanoutServerReady, {
  stop: async () => {
    await server.close();
    await store.close();
  },
});
