import { MemoryStore, type CPPServer, type CPPServerOptions } from '@promethea/cpp-server';
import { afterEach, expect } from 'vitest';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import { type ConnectOptions, RawClient } from '../support/raw-client.js';
import { ScriptedModel, type ScriptedAnswer } from '../support/scripted-model.js';
import { startServer } from '../support/start-server.js';

export interface LocalInstance {
  server: CPPServer;
  /** The model of this instance: answers generated here are its calls. */
  model: ScriptedModel;
  connect(options?: ConnectOptions): Promise<RawClient>;
}

export interface LocalInstances {
  store: MemoryStore;
  /** The cluster of the instances last started: what Redis would hold. */
  cluster: LocalCluster;
  start(
    count: number,
    answer: ScriptedAnswer | ((callIndex: number) => ScriptedAnswer),
    options?: CPPServerOptions,
  ): Promise<LocalInstance[]>;
}

/**
 * Servers in this process that share one store and one `LocalCluster`: they coordinate exactly as separate
 * processes on PostgreSQL and Redis do, with the test in control of every model. Closed after each test, which
 * also fails if a client received a frame that does not match the protocol.
 */
export function useLocalInstances(): LocalInstances {
  let store = new MemoryStore();
  let cluster = new LocalCluster();
  let servers: CPPServer[] = [];
  let clients: RawClient[] = [];

  afterEach(async () => {
    const [opened, started] = [clients, servers];
    [clients, servers] = [[], []];
    await Promise.all(opened.map((client) => client.close()));
    for (const server of started) await server.close();
    expect(opened.flatMap((client) => client.invalid)).toEqual([]);
    store = new MemoryStore();
  });

  return {
    get store() {
      return store;
    },
    get cluster() {
      return cluster;
    },
    async start(count, answer, options = {}) {
      cluster = new LocalCluster();
      return Promise.all(
        Array.from({ length: count }, async () => {
          const model = new ScriptedModel(answer);
          const server = await startServer({ store, model, cluster: cluster.join(), ...options });
          servers.push(server);
          const connect = async (options?: ConnectOptions) => {
            const client = await RawClient.connect(server.url, options);
            clients.push(client);
            return client;
          };
          return { server, model, connect };
        }),
      );
    },
  };
}
