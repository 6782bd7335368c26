import type { CPPServer, CPPServerOptions } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { RedisClusterTransport } from '@promethea/cpp-server/redis';
import { afterEach, expect } from 'vitest';
import { TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { type ConnectOptions, RawClient } from '../support/raw-client.js';
import { deleteRedisKeys, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
import { ScriptedModel, type ScriptedAnswer } from '../support/scripted-model.js';
import { startServer } from '../support/start-server.js';
import { TcpProxy } from '../support/tcp-proxy.js';

export interface ProxiedInstance {
  server: CPPServer;
  /** Its own store, through the proxy. */
  store: PostgresStore;
  /** The model of this instance: answers generated here are its calls. */
  model: ScriptedModel;
  /** What the server reported through its 'error' event, in order. */
  errors: unknown[];
  connect(options?: ConnectOptions): Promise<RawClient>;
}

export interface ProxiedInstances {
  /** Between the instances and this machine's PostgreSQL: cut it to take the database away from all of them. */
  readonly postgres: TcpProxy;
  /** Between the instances and this machine's Redis. */
  readonly redis: TcpProxy;
  /** A store on the test's schema that reaches PostgreSQL around the proxy: what the database holds. */
  direct(): Promise<PostgresStore>;
  start(count: number, answer: ScriptedAnswer, options?: CPPServerOptions): Promise<ProxiedInstance[]>;
}

/**
 * Cluster instances in this process, each with a PostgreSQL store and a Redis transport of its own (as separate
 * processes have) on this machine's services, reached through TCP proxies the test can cut: a database restart or a
 * Redis outage without stopping services that other tests share. A schema and a key prefix per test; everything
 * is closed and dropped after it, which also fails if a client received a frame that does not match the protocol.
 */
export function useProxiedInstances(): ProxiedInstances {
  const schemas = useTestSchemas();
  let current:
    | { postgres: TcpProxy; redis: TcpProxy; schema: string; prefix: string; direct?: PostgresStore }
    | undefined;
  let closing: Array<() => Promise<void>> = [];
  let clients: RawClient[] = [];

  afterEach(async () => {
    const [opened, toClose, test] = [clients, closing, current];
    [clients, closing, current] = [[], [], undefined];
    await Promise.all(opened.map((client) => client.close()));
    await test?.postgres.restore().catch(() => {});
    await test?.redis.restore().catch(() => {});
    for (const close of toClose.reverse()) await close();
    if (test) await deleteRedisKeys(test.prefix);
    expect(opened.flatMap((client) => client.invalid)).toEqual([]);
  });

  const proxies = () => {
    if (!current) throw new Error('no instance started in this test');
    return current;
  };

  return {
    get postgres() {
      return proxies().postgres;
    },
    get redis() {
      return proxies().redis;
    },
    async direct() {
      const test = proxies();
      if (!test.direct) {
        test.direct = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema: test.schema });
        const store = test.direct;
        closing.unshift(() => store.close());
      }
      return test.direct;
    },
    async start(count, answer, options = {}) {
      const [postgres, redis] = await Promise.all([TcpProxy.start(TEST_DATABASE_URL), TcpProxy.start(TEST_REDIS_URL)]);
      closing.push(
        () => postgres.close(),
        () => redis.close(),
      );
      current = { postgres, redis, schema: schemas.create(), prefix: uniqueRedisPrefix() };
      const { schema, prefix } = current;
      const instances: ProxiedInstance[] = [];
      // One after the other: each store migrates the new schema as it opens.
      for (let index = 0; index < count; index += 1) {
        const store = await PostgresStore.open({ connectionString: postgres.url(TEST_DATABASE_URL), schema });
        const cluster = await RedisClusterTransport.connect({ url: redis.url(TEST_REDIS_URL), prefix });
        const model = new ScriptedModel(answer);
        const server = await startServer({ store, cluster, model, ...options });
        const errors: unknown[] = [];
        server.on('error', (error: unknown) => errors.push(error));
        closing.push(
          () => store.close(),
          () => cluster.close(),
          () => server.close(),
        );
        const connect = async (options?: ConnectOptions) => {
          const client = await RawClient.connect(server.url, options);
          clients.push(client);
          return client;
        };
        instances.push({ server, store, model, errors, connect });
      }
      return instances;
    },
  };
}
