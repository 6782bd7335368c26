import { CPPServer, LocalCluster, LocalClusterTransport, MemoryStore } from '@promethea/cpp-server';
import { serveRequests } from './bench-process.js';
import { PacedProvider } from './paced-provider.js';

/** How the fan-out measure's servers are started: one instance, or two of one cluster sharing a store. */
export interface FanoutServerConfig {
  instances: 1 | 2;
  intervalMs: number;
  tokens: number;
}

export interface FanoutServerReady {
  ports: number[];
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
const store = new MemoryStore();
// Two instances share one store and one in-process cluster: the other instance's members get each chunk through the
// thread's link, as they would through Redis, without a network between them.
const cluster = new LocalCluster();
const servers = await Promise.all(
  Array.from({ length: config.instances }, async () => {
    const server = new CPPServer({
      port: 0,
      host: '127.0.0.1',
      store,
      model: new PacedProvider(config.intervalMs, config.tokens),
      auth: 'did-key',
      limits: FANOUT_LIMITS,
      ...(config.instances > 1 ? { cluster: new LocalClusterTransport(cluster, false) } : {}),
    });
    await server.ready;
    return server;
  }),
);

serveRequests({ ports: servers.map((server) => server.port) } satisfies FanoutServerReady, {
  stop: async () => {
    await Promise.all(servers.map((server) => server.close()));
    await store.close();
  },
});
