import { randomBytes } from 'node:crypto';
import { Pool, type QueryResultRow } from 'pg';
import { afterAll, afterEach, describe } from 'vitest';

/** The machines that run the tests have PostgreSQL there (trust auth); `.ci/run` starts it when it is down. */
export const TEST_DATABASE_URL = process.env.CPP_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const unreachable = await findWhyUnreachable();

/**
 * A describe block of tests that need PostgreSQL. Without it they are skipped, saying why, except in CI (`CI` set),
 * where the missing database is an error: a broken machine must fail the run, not pass it with tests left out.
 */
export function describeWithPostgres(name: string, body: () => void): void {
  if (unreachable === undefined) {
    describe(name, body);
  } else if (process.env.CI) {
    throw new Error(`PostgreSQL is needed in CI and is not reachable at ${TEST_DATABASE_URL}: ${unreachable}`);
  } else {
    const reason = `PostgreSQL is not reachable at ${TEST_DATABASE_URL}: ${unreachable}`;
    console.warn(
      `Skipping "${name}": ${reason}. Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`,
    );
    describe.skip(`${name} (skipped: ${reason})`, body);
  }
}

export interface TestSchemas {
  /** A new, unused schema name (the schema itself is created by whoever migrates it); dropped after the test. */
  create(): string;
  /** Runs SQL on a connection of its own, outside every store, to look at or tamper with the database. */
  query<Row extends QueryResultRow>(sql: string, values?: unknown[]): Promise<Row[]>;
  /** A pool of its own, for tests that need to hold a transaction open; ended after the tests. */
  readonly pool: Pool;
}

/** Unique schemas per test, so that test runs and files never see each other's data; each is dropped after its test. */
export function useTestSchemas(): TestSchemas {
  const pool = new Pool({ connectionString: TEST_DATABASE_URL });
  let created: string[] = [];

  afterEach(async () => {
    const names = created;
    created = [];
    for (const name of names) await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  });
  afterAll(() => pool.end());

  return {
    pool,
    create() {
      const name = testSchemaName();
      created.push(name);
      return name;
    },
    async query<Row extends QueryResultRow>(sql: string, values: unknown[] = []) {
      return (await pool.query<Row>(sql, values)).rows;
    },
  };
}

/** A new, unused schema name for a test (the schema itself is created by whoever migrates it). */
export function testSchemaName(): string {
  return `cpp_test_${randomBytes(8).toString('hex')}`;
}

async function findWhyUnreachable(): Promise<string | undefined> {
  const pool = new Pool({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5_000, max: 1 });
  try {
    await pool.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await pool.end();
  }
}
