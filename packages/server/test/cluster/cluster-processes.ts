import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findInvariantViolations } from '@promethea/cpp-protocol';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { Pool } from 'pg';
import { it as base, expect } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-migrations.js';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { TEST_DATABASE_URL, testSchemaName } from '../support/postgres.js';
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
 * Vitest's `it` with a `cluster` of `cpp-server` processes in cluster mode on this machine's PostgreSQL and Redis,
 * on a schema and a key prefix of the test's own. When the test ends its nodes are stopped (SIGTERM: running
 * answers are kept as interrupted), every thread stored is checked for the tree's invariants straight from
 * PostgreSQL, and the schema and keys are dropped. A fixture rather than hooks: tests that use it may run at once.
 */
export const it = base.extend<{ cluster: ClusterProcesses }>({
  // Vitest reads a fixture's dependencies from the pattern of its first parameter: this one has none.
  cluster: async ({}, use) => {
    const schema = testSchemaName();
    const prefix = uniqueRedisPrefix();
    const nodes: ClusterNode[] = [];
    const clients: RawClient[] = [];
    const database = ['--database-url', TEST_DATABASE_URL, '--database-schema', schema];
    let migrated = false;

    await use({
      async start(count) {
        const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'migrate', ...database]);
        migrated = true;
        const latest = POSTGRES_MIGRATIONS.length;
        expect(stdout).toContain(`done: ${latest} migrations applied, schema at version ${latest}`);
        const args = ['--store', 'postgres', ...database, '--redis-url', TEST_REDIS_URL, '--redis-prefix', prefix, '--demo-delay-ms', '30'];
        const started = await Promise.all(Array.from({ length: count }, () => startCliServer(args)));
        const connectable = started.map((server) => ({
          ...server,
          connect: async () => {
            const client = await RawClient.connect(server.url);
            clients.push(client);
            return client;
          },
        }));
        nodes.push(...connectable);
        return connectable;
      },
    });

    const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(nodes.map((node) => node.kill('SIGTERM')));
      expect(clients.flatMap((client) => client.invalid)).toEqual([]);
      if (migrated) expect(await invariantViolations(pool, schema)).toEqual({});
    } finally {
      await deleteRedisKeys(prefix);
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  },
});

/** The violations of every thread of the schema, by thread id; `{}` when every tree is sound. */
async function invariantViolations(pool: Pool, schema: string): Promise<Record<string, string[]>> {
  const store = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema });
  try {
    const found: Record<string, string[]> = {};
    const { rows } = await pool.query<{ threadId: string }>(`SELECT thread_id AS "threadId" FROM ${schema}.threads`);
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
