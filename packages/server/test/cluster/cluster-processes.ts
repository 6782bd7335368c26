import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findInvariantViolations } from '@promethea/cpp-protocol';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { afterEach, expect } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-migrations.js';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { TEST_DATABASE_URL, useTestSchemas, type TestSchemas } from '../support/postgres.js';
import { RawClient } from '../support/raw-client.js';
import { deleteRedisKeys, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';

const CLI = fileURLToPath(new URL('../../dist/cli/cpp-server.js', import.meta.url));

export interface ClusterNode extends CliServer {
  connect(): Promise<RawClient>;
}

export interface ClusterProcesses {
  /** Migrates a new schema with `cpp-server migrate`, then starts `count` nodes on it and on a new Redis prefix. */
  start(count: number): Promise<ClusterNode[]>;
}

/**
 * `cpp-server` processes in cluster mode on this machine's PostgreSQL and Redis, each test on a schema and a key
 * prefix of its own. After each test the nodes are stopped (SIGTERM: running answers are kept as interrupted)
 * and every thread stored is checked for the tree's invariants, straight from PostgreSQL.
 */
export function useClusterProcesses(): ClusterProcesses {
  const schemas = useTestSchemas();
  let nodes: ClusterNode[] = [];
  let clients: RawClient[] = [];
  let schema: string | undefined;
  let prefix: string | undefined;

  // Registered after useTestSchemas' own: runs before it drops the schema.
  afterEach(async () => {
    const [opened, started] = [clients, nodes];
    [clients, nodes] = [[], []];
    await Promise.all(opened.map((client) => client.close()));
    await Promise.all(started.map((node) => node.kill('SIGTERM')));
    expect(opened.flatMap((client) => client.invalid)).toEqual([]);
    if (schema) expect(await invariantViolations(schemas, schema)).toEqual({});
    if (prefix) await deleteRedisKeys(prefix);
    [schema, prefix] = [undefined, undefined];
  });

  return {
    async start(count) {
      schema = schemas.create();
      prefix = uniqueRedisPrefix();
      const database = ['--database-url', TEST_DATABASE_URL, '--database-schema', schema];
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'migrate', ...database]);
      const latest = POSTGRES_MIGRATIONS.length;
      expect(stdout).toContain(`done: ${latest} migrations applied, schema at version ${latest}`);
      const args = ['--store', 'postgres', ...database, '--redis-url', TEST_REDIS_URL, '--redis-prefix', prefix, '--demo-delay-ms', '30'];
      const started = await Promise.all(Array.from({ length: count }, () => startCliServer(args)));
      const wrapped = started.map((server) => ({
        ...server,
        connect: async () => {
          const client = await RawClient.connect(server.url);
          clients.push(client);
          return client;
        },
      }));
      nodes.push(...wrapped);
      return wrapped;
    },
  };
}

/** The violations of every thread of the schema, by thread id; `{}` when every tree is sound. */
async function invariantViolations(schemas: TestSchemas, schema: string): Promise<Record<string, string[]>> {
  const store = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema });
  try {
    const found: Record<string, string[]> = {};
    const rows = await schemas.query<{ threadId: string }>(`SELECT thread_id AS "threadId" FROM ${schema}.threads`);
    expect(rows.length).toBeGreaterThan(0);
    for (const { threadId } of rows) {
      const violations = findInvariantViolations((await store.loadThread(threadId))!.graph);
      if (violations.length > 0) found[threadId] = violations;
    }
    return found;
  } finally {
    await store.close();
  }
}
