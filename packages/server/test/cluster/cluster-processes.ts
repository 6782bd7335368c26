import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findInvariantViolations, type ServerFrame } from '@promethea/cpp-protocol';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { Pool } from 'pg';
import { it as base, expect } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-migrations.js';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { TEST_DATABASE_URL, testSchemaName } from '../support/postgres.js';
import { nextUpdate, type GraphUpdate } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { deleteRedisKeys, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';

const CLI = fileURLToPath(new URL('../../dist/cli/cpp-server.js', import.meta.url));

export interface ClusterInstance extends CliServer {
  connect(): Promise<RawClient>;
}

export interface ClusterProcesses {
  /** Migrates a new schema with `cpp-server migrate`, then starts `count` instances on it and on a new Redis prefix. */
  start(count: number): Promise<ClusterInstance[]>;
}

/**
 * Vitest's `it` with a `cluster` of `cpp-server` processes in cluster mode on this machine's PostgreSQL and Redis,
 * on a schema and a key prefix of the test's own. When the test ends its instances are stopped (SIGTERM: running
 * answers are kept as interrupted), every thread stored is checked for the tree's invariants straight from
 * PostgreSQL, and the schema and keys are dropped. A fixture rather than hooks: tests that use it may run at once.
 */
export const it = base.extend<{ cluster: ClusterProcesses }>({
  // biome-ignore lint/correctness/noEmptyPattern: Vitest reads a fixture's dependencies from this pattern; none here.
  cluster: async ({}, use) => {
    const schema = testSchemaName();
    const prefix = uniqueRedisPrefix();
    const instances: ClusterInstance[] = [];
    const clients: RawClient[] = [];
    const database = ['--database-url', TEST_DATABASE_URL, '--database-schema', schema];
    let migrated = false;

    await use({
      async start(count) {
        const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'migrate', ...database]);
        migrated = true;
        const latest = POSTGRES_MIGRATIONS.length;
        expect(stdout).toContain(`done: ${latest} migrations applied, schema at version ${latest}`);
        const args = [
          '--store',
          'postgres',
          ...database,
          '--redis-url',
          TEST_REDIS_URL,
          '--redis-prefix',
          prefix,
          '--demo-delay-ms',
          '30',
        ];
        const started = await Promise.all(Array.from({ length: count }, () => startCliServer(args)));
        const connectable = started.map((server) => ({
          ...server,
          connect: async () => {
            const client = await RawClient.connect(server.url);
            clients.push(client);
            return client;
          },
        }));
        instances.push(...connectable);
        return connectable;
      },
    });

    const pool = new Pool({ connectionString: TEST_DATABASE_URL, max: 1 });
    try {
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(instances.map((instance) => instance.kill('SIGTERM')));
      expect(clients.flatMap((client) => client.invalid)).toEqual([]);
      if (migrated) expect(await invariantViolations(pool, schema)).toEqual({});
    } finally {
      await deleteRedisKeys(prefix);
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  },
});

/**
 * The end of an answer (`completed`, or `interrupted` by a halt) as a client sees it through its own instance: the
 * frame that announces it (CPP_STREAM_COMPLETED, CPP_STREAM_HALTED), then the update that shows it, checked to agree
 * on the answer's length; or, when that instance reloaded the thread in between (after a gap in what it got from the
 * others, or a recovery it raced for), a CPP_SYNC_GRAPH showing the end in their place (docs/cluster.md).
 */
export async function answerEnd(
  client: RawClient,
  threadId: string,
  nodeId: string,
  status: 'completed' | 'interrupted',
): Promise<{ update: GraphUpdate; announced?: ServerFrame }> {
  const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes[nodeId]?.status === status);
  const length = update.nodes[nodeId]!.content.length;
  const updateAt = client.frames.findIndex((frame) => 'payload' in frame && frame.payload === update);
  const announcedAt = client.frames.findIndex((frame) =>
    status === 'completed'
      ? frame.type === 'CPP_STREAM_COMPLETED' && frame.payload.nodeId === nodeId
      : frame.type === 'CPP_STREAM_HALTED' && frame.payload.interruptedNodeId === nodeId,
  );
  if (client.frames[updateAt]!.type === 'CPP_SYNC_GRAPH' && announcedAt === -1) return { update };
  expect(announcedAt).toBeGreaterThan(-1);
  expect(announcedAt).toBeLessThan(updateAt);
  const announced = client.frames[announcedAt]!;
  expect(announced.payload).toMatchObject({ finalContentLength: length });
  return { update, announced };
}

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
