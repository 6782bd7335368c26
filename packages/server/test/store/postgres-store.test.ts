import { emptyGraph, planFinish, planPrompt, type TreeChange } from '@promethea/cpp-protocol';
import type { PoolClient } from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { oneMessageThread } from './one-message-thread.js';
import { createPool } from '../../src/store/postgres-connection.js';
import { migrate, POSTGRES_MIGRATIONS } from '../../src/store/postgres-migrations.js';
import { POSTGRES_STATEMENTS as SQL } from '../../src/store/postgres-statements.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { StoreConflictError } from '../../src/store/store-conflict-error.js';
import { eventually } from '../support/eventually.js';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { describeConversationStoreContract } from './conversation-store-contract.js';
import { loadSound, TestClock, ThreadDriver } from './thread-driver.js';

// A PostgreSQL commit waits for its WAL flush (a few ms here), and the contract's property test makes thousands.
vi.setConfig({ testTimeout: 60_000 });

describeWithPostgres('PostgresStore', () => {
  const schemas = useTestSchemas();

  describeConversationStoreContract('PostgresStore', async () => {
    const schema = schemas.create();
    const open = () => PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema });
    return { store: await open(), reopen: open };
  });

  describe('on its database', () => {
    let schema: string;
    let clock: TestClock;
    const opened: PostgresStore[] = [];
    const open = async (onProgress?: (message: string) => void) => {
      const store = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema, onProgress });
      opened.push(store);
      return store;
    };
    const recorder = () => {
      const messages: string[] = [];
      return { messages, onProgress: (message: string) => void messages.push(message) };
    };
    const applying = (messages: string[]) => messages.filter((message) => message.includes('applying migration'));
    const migrationsTable = () =>
      schemas.query(`SELECT version, name FROM ${schema}.schema_migrations ORDER BY version`);
    const expectedMigrations = POSTGRES_MIGRATIONS.map(({ name }, index) => ({ version: index + 1, name }));

    beforeEach(() => {
      schema = schemas.create();
      clock = new TestClock();
    });

    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });

    describe('migrations', () => {
      it('migrates a new schema to the latest version, reporting each step, and a reopen migrates nothing again', async () => {
        const first = recorder();
        const store = await open(first.onProgress);
        const driver = await ThreadDriver.create(store, clock);
        await driver.prompt('Hello');
        const catalog = () =>
          schemas.query(
            `SELECT c.relname, c.relkind, pg_get_indexdef(c.oid) AS definition FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY c.relname`,
            [schema],
          );
        const catalogBefore = await catalog();
        await store.close();
        const second = recorder();

        const reopened = await open(second.onProgress);

        expect(applying(first.messages)).toHaveLength(POSTGRES_MIGRATIONS.length);
        expect(first.messages.at(-1)).toMatch(
          new RegExp(`${schema}: up to date at version ${POSTGRES_MIGRATIONS.length}`),
        );
        expect(applying(second.messages)).toEqual([]);
        expect(await migrationsTable()).toStrictEqual(expectedMigrations);
        expect(await catalog()).toStrictEqual(catalogBefore);
        expect(catalogBefore.map((relation) => relation.relname)).toEqual(
          expect.arrayContaining(['nodes', 'nodes_streaming', 'threads']),
        );
        await driver.expectStoreToMatch(reopened);
      });

      it('migrates exactly once when several servers open a new schema at the same time', async () => {
        const recorders = [recorder(), recorder(), recorder()];

        const stores = await Promise.all(recorders.map(({ onProgress }) => open(onProgress)));

        expect(recorders.flatMap(({ messages }) => applying(messages))).toHaveLength(POSTGRES_MIGRATIONS.length);
        expect(await migrationsTable()).toStrictEqual(expectedMigrations);
        for (const store of stores) expect(await store.listThreads('did:example:alice', { limit: 200 })).toEqual([]);
      });

      it('migrates through the migrate function on any pool, counting only what this call applied', async () => {
        const pools = [
          createPool({ connectionString: TEST_DATABASE_URL }),
          createPool({ connectionString: TEST_DATABASE_URL }),
        ];
        try {
          const results = await Promise.all(pools.map((pool) => migrate(pool, { schema })));

          expect(results.map((result) => result.version)).toEqual([
            POSTGRES_MIGRATIONS.length,
            POSTGRES_MIGRATIONS.length,
          ]);
          // Each migration runs exactly once, whichever of the two got there first.
          expect(results[0]!.applied + results[1]!.applied).toBe(POSTGRES_MIGRATIONS.length);
          expect(await migrationsTable()).toStrictEqual(expectedMigrations);
        } finally {
          await Promise.all(pools.map((pool) => pool.end()));
        }
      });

      it("keeps, in a schema of the version before reasoning, the pieces an earlier server saved, as the answer's text", async () => {
        const before = POSTGRES_MIGRATIONS.slice(0, 3);
        // The schema as a server of version 3 left it (the migrations table as lockSchema makes it), mid-stream.
        await schemas.query(`BEGIN;
          CREATE SCHEMA ${schema};
          SET LOCAL search_path TO ${schema};
          CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
          ${before.map(({ sql }) => sql).join('\n')}
          ${before.map(({ name }, index) => `INSERT INTO schema_migrations (version, name) VALUES (${index + 1}, '${name}');`).join('\n')}
          INSERT INTO threads (thread_id, owner_did, title, created_at, updated_at, version, root_node_id, head_node_id)
            VALUES ('thr_old', 'did:example:alice', 'Old', 1, 1, 1, 'msg_q', 'msg_a');
          INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, status, created_at)
            VALUES ('msg_q', 'thr_old', NULL, 1, 'user', 'Hello', 'completed', 1), ('msg_a', 'thr_old', 'msg_q', 2, 'assistant', '', 'streaming', 1);
          INSERT INTO streamed_text VALUES ('msg_a', 0, 'Saved in '), ('msg_a', 9, 'pieces');
          COMMIT;`);
        const progress = recorder();

        const store = await open(progress.onProgress);

        expect(applying(progress.messages)).toHaveLength(POSTGRES_MIGRATIONS.length - 3);
        expect(applying(progress.messages)[0]).toContain(
          `applying migration 4 of ${POSTGRES_MIGRATIONS.length} (reasoning)`,
        );
        expect(await migrationsTable()).toStrictEqual(expectedMigrations);
        const answer = async () => (await loadSound(store, 'thr_old')).graph.nodes['msg_a'];
        expect(await answer()).toMatchObject({ status: 'streaming', content: 'Saved in pieces' });
        expect(await answer()).not.toHaveProperty('reasoning');
        await store.saveStreamedText([
          { threadId: 'thr_old', nodeId: 'msg_a', part: 'reasoning', offset: 0, text: 'Thought' },
          { threadId: 'thr_old', nodeId: 'msg_a', offset: 15, text: ', and more' },
        ]);
        expect(await answer()).toMatchObject({ content: 'Saved in pieces, and more', reasoning: 'Thought' });
        expect(await store.interruptStreamingNodes(clock.now())).toEqual(['thr_old']);
        expect(await answer()).toMatchObject({
          status: 'interrupted',
          content: 'Saved in pieces, and more',
          reasoning: 'Thought',
        });
        expect(await schemas.query(`SELECT count(*)::integer AS pieces FROM ${schema}.streamed_text`)).toEqual([
          { pieces: 0 },
        ]);
      });

      it('refuses a schema whose version is newer than it knows', async () => {
        await (await open()).close();
        await schemas.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, 'from the future')`, [
          POSTGRES_MIGRATIONS.length + 1,
        ]);

        await expect(open()).rejects.toThrow(/newer/);
      });

      it('refuses a schema name that is not a plain lowercase identifier', async () => {
        schema = 'cpp; DROP TABLE threads';

        await expect(open()).rejects.toThrow(/lowercase identifier/);
      });
    });

    it('reads a page of the thread list, the first or one after a cursor, as a range of one index, sorting nothing', async () => {
      await open();
      // Enough threads that the planner's choice is the one a long history gets.
      await schemas.query(`
        INSERT INTO ${schema}.threads (thread_id, owner_did, title, created_at, updated_at, version)
        SELECT 'thread_' || lpad(n::text, 8, '0'), CASE WHEN n % 10 = 0 THEN 'did:example:bob' ELSE 'did:example:alice' END,
               'title ' || n, n, n, 0
        FROM generate_series(1, 20000) AS n`);
      await schemas.query(`ANALYZE ${schema}.threads`);
      const plan = async (sql: string, values: unknown[]) => {
        const client = await schemas.pool.connect();
        try {
          await client.query(`SET search_path TO ${schema}`);
          const lines = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values)).rows;
          return lines.map((line) => line['QUERY PLAN']).join('\n');
        } finally {
          client.release();
        }
      };

      const first = await plan(SQL.selectFirstThreads, ['did:example:alice', 51]);
      const after = await plan(SQL.selectThreadsAfter, ['did:example:alice', 51, 10_000, 'thread_00010000']);
      expect(first).toMatch(
        /Index Scan using threads_by_owner on threads\s.*\n\s+Index Cond: \(owner_did = 'did:example:alice'::text\)/,
      );
      expect(after).toMatch(
        /Index Scan using threads_by_owner on threads\s.*\n\s+Index Cond: \(\(owner_did = 'did:example:alice'::text\) AND \(ROW\(updated_at, thread_id\) < ROW\('10000'::bigint, 'thread_00010000'::text\)\)\)/,
      );
      for (const text of [first, after]) expect(text).not.toMatch(/Sort|Seq Scan on threads/);
    });

    it('finds the newest matches among the messages stored last by a walk from the newest, older ones by the index', async () => {
      const store = await open();
      const owner = 'did:example:alice';
      // More than the walked window: the oldest message lies beyond it, 1,200 others after it.
      const oldest = oneMessageThread(owner, 'a rare word, and a common one', 1);
      const others = Array.from({ length: 1_200 }, (_, index) =>
        oneMessageThread(owner, `common ${index}${index % 100 === 0 ? ' edge' : ''}`, 2 + index),
      );
      await store.importThreads([oldest, ...others]);
      await schemas.query(`ANALYZE ${schema}.nodes`);
      await schemas.query(`ANALYZE ${schema}.threads`);
      const found = async (word: string, limit: number) =>
        (await store.searchThreads(owner, [word], limit)).map((hit) => hit.threadId);

      expect(await found('common', 3)).toEqual(
        others
          .slice(-3)
          .map((thread) => thread.threadId)
          .reverse(),
      );
      expect(await found('rare', 3)).toEqual([oldest.threadId]);
      // Across the window's edge (the 1,000 messages stored last): ten newer matches, then two older ones.
      const edges = others.filter((_, index) => index % 100 === 0).map((thread) => thread.threadId);
      expect(await found('edge', 20)).toEqual(edges.reverse());

      const plan = async (sql: string, values: unknown[]) => {
        const client = await schemas.pool.connect();
        try {
          await client.query(`SET search_path TO ${schema}`);
          const lines = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values)).rows;
          return lines.map((line) => line['QUERY PLAN']).join('\n');
        } finally {
          client.release();
        }
      };
      const newer = await plan(SQL.searchNewerNodes, [owner, 'common:*', 20, 1_000]);
      const older = await plan(SQL.searchOlderNodes, [owner, 'rare:*', 20, 1_000]);
      expect(newer).toMatch(/Index Scan Backward using nodes_by_stored on nodes/);
      expect(newer).not.toMatch(/Sort/);
      expect(older).toMatch(/Bitmap Index Scan on nodes_search/);
      expect(older).not.toMatch(/nodes_by_stored|Seq Scan on threads/);
    });

    describe('concurrent writers', () => {
      /** Holds the rows in a transaction of its own until `release`, so that commits queue up behind it. */
      async function holdRowLocks(sql: string, values: unknown[]) {
        const holder = await schemas.pool.connect();
        await holder.query('BEGIN');
        await holder.query(sql, values);
        const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        const release = async () => {
          await holder.query('ROLLBACK');
          holder.release();
        };
        return { holder, pid, release };
      }

      /** The connections waiting, directly or in a queue, for a lock that the connection `pid` holds. */
      async function waitingBehind(pid: number): Promise<number[]> {
        const rows = await schemas.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
          [pid],
        );
        const behind = await Promise.all(rows.map((row) => waitingBehind(row.pid)));
        return [...rows.map((row) => row.pid), ...behind.flat()];
      }

      /** Resolves with their pids once `count` connections wait for a lock that the connection `pid` holds. */
      async function waitForWaiting(pid: number, count: number): Promise<number[]> {
        await expect.poll(async () => (await waitingBehind(pid)).length, { timeout: 60_000 }).toBe(count);
        return waitingBehind(pid);
      }

      let held: { holder: PoolClient; release: () => Promise<void> } | undefined;
      afterEach(async () => {
        await held?.release();
        held = undefined;
      });

      function planExchange(threadId: string, prefix: string): TreeChange {
        return planPrompt(emptyGraph(threadId), {
          userNodeId: `msg_${prefix}_user`,
          userPrompt: prefix,
          assistantNodeId: `msg_${prefix}_answer`,
          createdAt: clock.now(),
        });
      }

      it('lets exactly one of two stores win when both commit a change to one thread at once', async () => {
        const [one, two] = [await open(), await open()];
        const driver = await ThreadDriver.create(one, clock);
        const { assistantNodeId } = await driver.prompt('Hello');
        // Both rewrite the same node and neither adds one: only the thread's row lock can tell them apart.
        const finish = (content: string) =>
          planFinish(driver.graph, { nodeId: assistantNodeId, status: 'completed', content });
        const lock = await holdRowLocks(`SELECT 1 FROM ${schema}.threads WHERE thread_id = $1 FOR UPDATE`, [
          driver.threadId,
        ]);
        held = lock;

        const outcomes = Promise.allSettled([
          one.commit(finish('one'), { updatedAt: clock.now() }),
          two.commit(finish('two'), { updatedAt: clock.now() }),
        ]);
        await waitForWaiting(lock.pid, 2);
        held = undefined;
        await lock.release();
        const results = await outcomes;

        expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
        const lost = results.find((result) => result.status === 'rejected');
        expect(lost?.reason).toSatisfy(StoreConflictError.isInstance);
        const stored = await loadSound(two, driver.threadId);
        expect(stored.graph.nodes[assistantNodeId]?.content).toBe(results[0]!.status === 'fulfilled' ? 'one' : 'two');
        expect(stored.graph.version).toBe(driver.graph.version + 1);
      });

      it('lets exactly one of two threads take a new node id that both commit at once', async () => {
        const [one, two] = [await open(), await open()];
        const drivers = [await ThreadDriver.create(one, clock), await ThreadDriver.create(two, clock)];
        const threadIds = drivers.map((driver) => driver.threadId);
        const changes = threadIds.map((threadId) => planExchange(threadId, 'shared'));
        const lock = await holdRowLocks(`SELECT 1 FROM ${schema}.threads WHERE thread_id = ANY ($1) FOR UPDATE`, [
          threadIds,
        ]);
        held = lock;

        const outcomes = Promise.allSettled([
          one.commit(changes[0]!, { updatedAt: clock.now() }),
          two.commit(changes[1]!, { updatedAt: clock.now() }),
        ]);
        await waitForWaiting(lock.pid, 2);
        held = undefined;
        await lock.release();
        const results = await outcomes;

        expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
        const winnerIndex = results.findIndex((result) => result.status === 'fulfilled');
        const owner = threadIds[winnerIndex]!;
        expect(await one.findNodeThread('msg_shared_user')).toBe(owner);
        const stored = await Promise.all(threadIds.map((threadId) => loadSound(one, threadId)));
        expect(stored.map((thread) => Object.keys(thread.graph.nodes).length)).toEqual(
          threadIds.map((threadId) => (threadId === owner ? 2 : 0)),
        );
        expect(stored.map((thread) => thread.graph.version)).toEqual(
          threadIds.map((threadId) => (threadId === owner ? 1 : 0)),
        );
      });

      it("refuses as conflicts two commits that deadlock over each other's node ids, and writes neither", async () => {
        const [one, two] = [await open(), await open()];
        const [a, b] = [await ThreadDriver.create(one, clock), await ThreadDriver.create(two, clock)];
        const aNodes = await a.prompt('A');
        const bNodes = await b.prompt('B');
        const rewrite = (driver: ThreadDriver, nodeIds: string[]): TreeChange => ({
          threadId: driver.threadId,
          baseVersion: driver.graph.version,
          version: driver.graph.version + 1,
          rootNodeId: driver.graph.rootNodeId,
          activeHeadMessageId: driver.graph.activeHeadMessageId,
          nodes: nodeIds.map((id) => ({ ...(a.graph.nodes[id] ?? b.graph.nodes[id])!, content: 'overwritten' })),
        });
        // A rewrites its user node, then its answer, which the test holds, so A stops there holding its user node.
        // B rewrites its user node, then A's, and waits for A. Once A goes on to B's user node, each waits for the
        // other: PostgreSQL breaks the deadlock by failing one, and the other finds a node of another thread.
        const lock = await holdRowLocks(`SELECT 1 FROM ${schema}.nodes WHERE node_id = $1 FOR UPDATE`, [
          aNodes.assistantNodeId,
        ]);
        held = lock;
        const settle = (commit: Promise<void>) =>
          commit.then(
            () => undefined,
            (error: unknown) => error,
          );

        const outcomeOfA = settle(
          one.commit(rewrite(a, [aNodes.userNodeId, aNodes.assistantNodeId, bNodes.userNodeId]), {
            updatedAt: clock.now(),
          }),
        );
        await waitForWaiting(lock.pid, 1);
        const outcomeOfB = settle(
          two.commit(rewrite(b, [bNodes.userNodeId, aNodes.userNodeId]), { updatedAt: clock.now() }),
        );
        await waitForWaiting(lock.pid, 2);
        held = undefined;
        await lock.release();

        for (const outcome of [await outcomeOfA, await outcomeOfB])
          expect(outcome).toSatisfy(StoreConflictError.isInstance);
        await a.expectStoreToMatch(one);
        await b.expectStoreToMatch(one);
      });

      it('queues up two batches of streamed text that name the same nodes in opposite orders, instead of deadlocking', async () => {
        const [one, two] = [await open(), await open()];
        const drivers = await Promise.all(['a', 'b', 'c'].map(() => ThreadDriver.create(one, clock)));
        const [a, b, c] = await Promise.all(
          ['a', 'b', 'c'].map((name, index) => drivers[index]!.prompt(name, { assistantNodeId: `msg_${name}_answer` })),
        );
        const entry = (index: number, nodeId: string, text: string) => ({
          threadId: drivers[index]!.threadId,
          nodeId,
          offset: 0,
          text,
        });
        // A database of some size, where the planner visits the rows in the order the batch names them.
        await schemas.query(
          `INSERT INTO ${schema}.threads (thread_id, owner_did, title, created_at, updated_at, version) VALUES ('thr_old', 'did:example:old', '', 0, 0, 1)`,
        );
        await schemas.query(`
          INSERT INTO ${schema}.nodes (node_id, thread_id, seq, role, content, status, created_at)
          SELECT 'msg_old_' || n, 'thr_old', n, 'user', 'Old', 'completed', 0 FROM generate_series(1, 2000) AS n`);
        await schemas.query(`ANALYZE ${schema}.nodes`);
        // Both batches wait for c, which the test holds, then write the same pieces: were they written in the order
        // the batches name them, each would hold a piece the other wants next, and wait for the other.
        const lock = await holdRowLocks(`SELECT 1 FROM ${schema}.nodes WHERE node_id = $1 FOR UPDATE`, [
          c!.assistantNodeId,
        ]);
        held = lock;

        const first = one.saveStreamedText([
          entry(0, a!.assistantNodeId, 'first'),
          entry(2, c!.assistantNodeId, 'first'),
          entry(1, b!.assistantNodeId, 'first'),
        ]);
        await waitForWaiting(lock.pid, 1);
        const second = two.saveStreamedText([
          entry(2, c!.assistantNodeId, 'second'),
          entry(1, b!.assistantNodeId, 'second'),
          entry(0, a!.assistantNodeId, 'second'),
        ]);
        await waitForWaiting(lock.pid, 2);
        held = undefined;
        await lock.release();

        expect((await Promise.allSettled([first, second])).map((result) => result.status)).toEqual([
          'fulfilled',
          'fulfilled',
        ]);
        const contents = await Promise.all(
          drivers.map(
            async (driver, index) =>
              (await loadSound(one, driver.threadId)).graph.nodes[[a, b, c][index]!.assistantNodeId]?.content,
          ),
        );
        // The batch that committed last wrote every piece last.
        expect([
          ['first', 'first', 'first'],
          ['second', 'second', 'second'],
        ]).toContainEqual(contents);
      });

      it('makes a commit that ends an answer wait for a batch writing its pieces, and drops them with it', async () => {
        const [one, two] = [await open(), await open()];
        const driver = await ThreadDriver.create(two, clock);
        const { assistantNodeId } = await driver.prompt('Hello');
        // The batch holds its node (FOR SHARE) while it writes the piece, slowly. Without that lock the commit would
        // go first, and the batch, which saw the node streaming, would leave a piece behind that nothing reads.
        // It names its connection while it sleeps, so the test sees (in pg_stat_activity) when it has the node.
        await schemas.query(`
          CREATE FUNCTION ${schema}.slow_piece() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM set_config('application_name', '${schema}', true); PERFORM pg_sleep(0.3); RETURN NEW; END $$`);
        await schemas.query(
          `CREATE TRIGGER slow_piece BEFORE INSERT ON ${schema}.streamed_text FOR EACH ROW EXECUTE FUNCTION ${schema}.slow_piece()`,
        );

        const batch = one.saveStreamedText([
          { threadId: driver.threadId, nodeId: assistantNodeId, offset: 0, text: 'Hel' },
        ]);
        await eventually(async () => {
          const writing = await schemas.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [schema]);
          return writing.length > 0 ? true : undefined;
        }, 'the batch is writing its piece');
        await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Hello there' });
        await batch;

        expect((await loadSound(one, driver.threadId)).graph.nodes[assistantNodeId]?.content).toBe('Hello there');
        expect(await schemas.query(`SELECT count(*)::integer AS pieces FROM ${schema}.streamed_text`)).toEqual([
          { pieces: 0 },
        ]);
      });
    });

    it('writes a batch of streamed text in one statement: when an entry fails, none is written', async () => {
      const store = await open();
      const [one, two] = [await ThreadDriver.create(store, clock), await ThreadDriver.create(store, clock)];
      const first = await one.prompt('First', { assistantNodeId: 'msg_1_answer' });
      const second = await two.prompt('Second', { assistantNodeId: 'msg_2_answer' });
      // The database refuses the batch's last entry (last in the batch and in node id order), as it could any of them.
      await schemas.query(`
        CREATE FUNCTION ${schema}.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.text = 'poison' THEN RAISE EXCEPTION 'poisoned content'; END IF; RETURN NEW; END $$`);
      await schemas.query(
        `CREATE TRIGGER refuse_poison BEFORE INSERT ON ${schema}.streamed_text FOR EACH ROW EXECUTE FUNCTION ${schema}.refuse_poison()`,
      );

      const batch = [
        { threadId: one.threadId, nodeId: first.assistantNodeId, offset: 0, text: 'Written alone?' },
        { threadId: two.threadId, nodeId: second.assistantNodeId, offset: 0, text: 'poison' },
      ];
      await expect(store.saveStreamedText(batch)).rejects.toThrow(/poisoned content/);

      await one.expectStoreToMatch(store);
      await two.expectStoreToMatch(store);
    });

    it('recovers, after a crash in the middle of a stream, the text persisted before it', async () => {
      // The crashed process: its pool is never closed (until the test ends), its stream never finished.
      const crashed = await open();
      const driver = await ThreadDriver.create(crashed, clock);
      const { assistantNodeId } = await driver.prompt('Tell me a story');
      await driver.stream(assistantNodeId, 'Once upon');
      await driver.stream(assistantNodeId, 'Once upon a time');

      const restarted = await open();
      const now = clock.now();

      expect(await restarted.interruptStreamingNodes(now)).toEqual([driver.threadId]);
      const stored = await loadSound(restarted, driver.threadId);
      expect(stored.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Once upon a time' });
      expect(stored.graph.version).toBe(driver.graph.version + 1);
      expect(stored.updatedAt).toBe(now);
      expect(await crashed.interruptStreamingNodes(clock.now())).toEqual([]);
    });
  });
});
