import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { emptyGraph, planPrompt } from '@promethea/cpp-protocol';
import type Database from 'better-sqlite3';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { uploaded } from './attachment-store-contract.js';
import { oneMessageThread } from './one-message-thread.js';
import { putAttachment } from '../../src/store/conversation-store.js';
import type { SqliteCheckpointer } from '../../src/store/sqlite-checkpointer.js';
import { MERGE_STEP_PAGES, mergeDue } from '../../src/store/sqlite-index-merger.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import { prepareStatements } from '../../src/store/sqlite-statements.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { StoreConflictError } from '../../src/store/store-conflict-error.js';
import { describeConversationStoreContract } from './conversation-store-contract.js';
import { sqliteFileHandles } from './sqlite-file-handles.js';
import { loadSound, TestClock, ThreadDriver } from './thread-driver.js';

const root = mkdtempSync(join(tmpdir(), 'cpp-sqlite-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let databases = 0;
/** A path in a folder that does not exist yet: the store creates it. */
function freshDatabasePath(): string {
  databases += 1;
  return join(root, `case-${databases}`, 'data', 'cpp.db');
}

describeConversationStoreContract('SqliteStore', async () => {
  const path = freshDatabasePath();
  return { store: SqliteStore.open(path), reopen: async () => SqliteStore.open(path) };
});

describe('SqliteStore on its file', () => {
  let path: string;
  const { open, inspect } = sqliteFileHandles(() => path);

  beforeEach(() => {
    path = freshDatabasePath();
  });

  it('puts the file in WAL mode', () => {
    open();

    expect(inspect().pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('migrates a new file to the latest schema, and a reopen migrates nothing again', async () => {
    const clock = new TestClock();
    const first = open();
    const driver = await ThreadDriver.create(first, clock);
    await driver.prompt('Hello');
    const schema = () => inspect().prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    const schemaBefore = schema();
    await first.close();

    const reopened = open();

    expect(inspect().pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
    expect(schema()).toStrictEqual(schemaBefore);
    await driver.expectStoreToMatch(reopened);
  });

  it('keeps, in a file of the first schema, the text an earlier server saved into a streaming node, and continues it', async () => {
    mkdirSync(dirname(path), { recursive: true });
    const old = inspect();
    old.exec(SQLITE_MIGRATIONS[0]!);
    old.pragma('user_version = 1');
    old.exec(`
      INSERT INTO threads VALUES ('thr_old', 'did:example:alice', 'Old', 1, 1, 1, 'msg_q', 'msg_a');
      INSERT INTO nodes VALUES ('msg_q', 'thr_old', NULL, 1, 'user', 'Hello', 'completed', 1, NULL, NULL);
      INSERT INTO nodes VALUES ('msg_a', 'thr_old', 'msg_q', 2, 'assistant', 'Saved whole', 'streaming', 1, NULL, NULL);`);
    const store = open();
    const textOf = async () => (await loadSound(store, 'thr_old')).graph.nodes['msg_a']?.content;

    expect(await textOf()).toBe('Saved whole');
    await store.saveStreamedText([{ threadId: 'thr_old', nodeId: 'msg_a', offset: 11, text: ', then in pieces' }]);
    expect(await textOf()).toBe('Saved whole, then in pieces');
    expect(await store.interruptStreamingNodes(2)).toEqual(['thr_old']);
    expect((await loadSound(store, 'thr_old')).graph.nodes['msg_a']).toMatchObject({
      status: 'interrupted',
      content: 'Saved whole, then in pieces',
    });
    expect(inspect().prepare('SELECT count(*) FROM streamed_text').pluck().get()).toBe(0);
  });

  it("keeps, in a file of the schema before reasoning, the pieces an earlier server saved, as the answer's text", async () => {
    mkdirSync(dirname(path), { recursive: true });
    const old = inspect();
    for (const sql of SQLITE_MIGRATIONS.slice(0, 3)) old.exec(sql);
    old.pragma('user_version = 3');
    old.exec(`
      INSERT INTO threads VALUES ('thr_old', 'did:example:alice', 'Old', 1, 1, 1, 'msg_q', 'msg_a');
      INSERT INTO nodes VALUES ('msg_q', 'thr_old', NULL, 1, 'user', 'Hello', 'completed', 1, NULL, NULL);
      INSERT INTO nodes VALUES ('msg_a', 'thr_old', 'msg_q', 2, 'assistant', '', 'streaming', 1, NULL, NULL);
      INSERT INTO streamed_text VALUES ('msg_a', 0, 'Saved in '), ('msg_a', 9, 'pieces');`);
    const store = open();

    expect((await loadSound(store, 'thr_old')).graph.nodes['msg_a']).toMatchObject({ content: 'Saved in pieces' });
    expect((await loadSound(store, 'thr_old')).graph.nodes['msg_a']).not.toHaveProperty('reasoning');
    await store.saveStreamedText([
      { threadId: 'thr_old', nodeId: 'msg_a', part: 'reasoning', offset: 0, text: 'Thought' },
    ]);
    expect((await loadSound(store, 'thr_old')).graph.nodes['msg_a']).toMatchObject({
      content: 'Saved in pieces',
      reasoning: 'Thought',
    });
  });

  it('checkpoints its log from a thread of its own, and closes that thread with the store', async () => {
    const store = SqliteStore.open(path, { checkpointIntervalMs: 20 });
    const driver = await ThreadDriver.create(store, new TestClock());
    const { assistantNodeId } = await driver.prompt('Hello');
    let streamed = '';
    for (let batch = 0; batch < 40; batch += 1)
      await driver.stream(assistantNodeId, (streamed += 'word '.repeat(2_000)));
    // Far below the store's own connection's threshold (64 MiB of log): only the thread copies pages this soon.
    // Polled until the test's own timeout: the checkpoint thread runs when the machine lets it.
    await vi.waitFor(() => expect(statSync(path).size).toBeGreaterThan(400_000), { timeout: 60_000 });

    await store.close();
    // The last connection to close removes the log: the thread's had closed before.
    expect(existsSync(`${path}-wal`)).toBe(false);
    await driver.expectStoreToMatch(open());
  });

  it('starts that thread with its first write: a store opened and only read runs none', async () => {
    const store = SqliteStore.open(path, { checkpointIntervalMs: 20 });
    const checkpointer = (store as unknown as { checkpointer: SqliteCheckpointer }).checkpointer;
    await store.listThreads('did:example:alice', { limit: 200 });
    await store.interruptStreamingNodes(1);
    expect(checkpointer.isRunning).toBe(false);

    await ThreadDriver.create(store, new TestClock());
    expect(checkpointer.isRunning).toBe(true);
    await store.close();
    expect(checkpointer.isRunning).toBe(false);
  });

  it('reads a page of the thread list, the first or one after a cursor, as a range of one index, sorting nothing', () => {
    SqliteStore.open(path).close();
    const statements = prepareStatements(inspect());
    const plan = (statement: { source: string }, parameters: object) =>
      inspect()
        .prepare(`EXPLAIN QUERY PLAN ${statement.source}`)
        .all(parameters)
        .map((row) => (row as { detail: string }).detail);
    const owner = { ownerDid: 'did:example:alice', limit: 51 };

    const first = plan(statements.selectFirstThreads, owner);
    const after = plan(statements.selectThreadsAfter, { ...owner, updatedAt: 5, threadId: 'thread_x' });
    expect(first[0]).toBe('SEARCH threads USING INDEX threads_by_owner_recent (owner_did=?)');
    expect(after[0]).toBe(
      'SEARCH threads USING INDEX threads_by_owner_recent (owner_did=? AND (updated_at,thread_id)<(?,?))',
    );
    // The node count of each listed thread is one range of nodes_by_thread; no step sorts.
    for (const steps of [first, after]) {
      expect(steps.some((step) => step.includes('USING COVERING INDEX nodes_by_thread (thread_id=?)'))).toBe(true);
      expect(steps.filter((step) => step.includes('TEMP B-TREE'))).toEqual([]);
    }
  });

  it('keeps its full-text indexes equal to the text through commits, edits, deletes, renames, imports and recovery', async () => {
    const store = open();
    const clock = new TestClock();
    const owner = 'did:example:alice';
    const driver = await ThreadDriver.create(store, clock);
    const first = await driver.prompt('Tell me about rivers');
    await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'Rivers flow to the sea.' });
    const second = await driver.prompt('And lakes?');
    await driver.stream(second.assistantNodeId, 'Lakes are');
    const third = await driver.pivot(second.assistantNodeId, 'Lakes', 'Only oceans');
    await driver.finish({ nodeId: third.assistantNodeId, status: 'completed', content: 'Oceans are deep.' });
    await driver.deleteBranch(third.userNodeId);
    const doomed = await ThreadDriver.create(store, clock);
    await doomed.prompt('A thread that goes away');
    await store.deleteThread(doomed.threadId);
    const renamed = await ThreadDriver.create(store, clock);
    const { assistantNodeId } = await renamed.prompt('First title');
    await store.commit(
      {
        threadId: renamed.threadId,
        baseVersion: 1,
        version: 2,
        nodes: [],
        rootNodeId: renamed.expected().graph.rootNodeId,
        activeHeadMessageId: assistantNodeId,
      },
      { updatedAt: clock.now(), title: 'Second title' },
    );
    await renamed.stream(assistantNodeId, 'Cut short by a crash');
    await store.importThreads([oneMessageThread(owner, 'Imported text', 1)]);
    await store.interruptStreamingNodes(clock.now());

    // FTS5's check of an external-content index against its table: it throws on any difference.
    const db = inspect();
    for (const index of ['node_text', 'title_text'])
      expect(() =>
        db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('integrity-check', 1)`).run(),
      ).not.toThrow();
    const found = async (query: string) => (await store.searchThreads(owner, [query], 20)).map((hit) => hit.snippet);
    expect(await found('second')).toEqual(['Second title']);
    expect(await found('cut')).toEqual(['Cut short by a crash']);
    expect(await found('goes')).toEqual([]);
    expect(await found('oceans')).toEqual([]);
    expect((await found('lakes')).sort()).toEqual(['And lakes?', 'Lakes']);
    expect(await found('imported')).toEqual(['Imported text']);
  });

  describe('an import', () => {
    const alice = 'did:example:alice';
    const bob = 'did:example:bob';
    const rivers = () =>
      Array.from({ length: 60 }, (_, index) => oneMessageThread(alice, `a river ${index}`, 1 + index));
    const seen = async (store: SqliteStore, did: string) => ({
      listed: (await store.listThreads(did, { limit: 100 })).length,
      found: (await store.searchThreads(did, ['river'], 100)).length,
    });
    const rowCounts = () =>
      inspect()
        .prepare('SELECT (SELECT COUNT(*) FROM threads) AS threads, (SELECT COUNT(*) FROM nodes) AS nodes')
        .get();

    it('is written a few threads per turn of the event loop, other calls answered between them, and appears at once', async () => {
      const store = open();
      await store.importThreads([oneMessageThread(bob, 'the river of bob', 1)]);
      const between: Array<{ alice: { listed: number; found: number }; bob: { listed: number; found: number } }> = [];
      let done = false;
      const turn = async () => {
        between.push({ alice: await seen(store, alice), bob: await seen(store, bob) });
        if (!done) setImmediate(turn);
      };
      setImmediate(turn);

      await store.importThreads(rivers());
      done = true;

      // 60 threads, 4 per transaction: each turn counted ran between two of them.
      expect(between.length).toBeGreaterThanOrEqual(60 / 4 - 1);
      expect(between.every((views) => views.alice.listed === 0 && views.alice.found === 0)).toBe(true);
      expect(between.every((views) => views.bob.listed === 1 && views.bob.found === 1)).toBe(true);
      expect(await seen(store, alice)).toEqual({ listed: 60, found: 60 });
    });

    it('refused half-way leaves nothing, in the tables or the indexes', async () => {
      const store = open();
      const [taken] = [oneMessageThread(bob, 'the river of bob', 1)];
      await store.importThreads([taken!]);
      const file = uploaded('notes of alice');
      await putAttachment(store, file.record, file.bytes);
      const threads = rivers();
      const carrying = threads[0]!;
      const [node] = Object.values(carrying.graph.nodes);
      node!.attachments = [file.attachment];
      threads[41] = { ...threads[41]!, threadId: taken!.threadId };

      await expect(store.importThreads(threads)).rejects.toThrow(StoreConflictError);

      expect(await seen(store, alice)).toEqual({ listed: 0, found: 0 });
      expect(rowCounts()).toEqual({ threads: 1, nodes: 1 });
      // An upload again, as before the import (PROTOCOL.md §25.5), that the next import may carry.
      expect((await store.loadAttachments([file.record.id]))[0]?.threadId).toBeNull();
      for (const index of ['node_text', 'title_text'])
        inspect().prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('integrity-check', 1)`).run();
      await store.importThreads(rivers());
      expect(await seen(store, alice)).toEqual({ listed: 60, found: 60 });
    });

    it('cut short is deleted by the next open of the file, and its own hand-over then gives nothing', async () => {
      const store = open();
      const importing = store.importThreads(rivers());
      await new Promise(setImmediate);
      expect((rowCounts() as { threads: number }).threads).toBeGreaterThan(0);

      // What a server starting on the file after a crash does; here the first import is still under way, as when
      // two processes share a file, and must then fail whole rather than hand over what is left.
      const next = open();

      await expect(importing).rejects.toThrow(/staged threads vanished/);
      expect(await seen(next, alice)).toEqual({ listed: 0, found: 0 });
      expect(await seen(store, alice)).toEqual({ listed: 0, found: 0 });
      expect(rowCounts()).toEqual({ threads: 0, nodes: 0 });
      for (const index of ['node_text', 'title_text'])
        inspect().prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('integrity-check', 1)`).run();
    });
  });

  describe('its full-text indexes', () => {
    const alice = 'did:example:alice';
    /** Threads of one message of `words` words, unlike each other: an index of many pages. */
    const wordy = (count: number, words: number) => {
      let seed = 7;
      const letter = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return String.fromCharCode(97 + (seed % 26));
      };
      const word = () => Array.from({ length: 3 + (seed % 5) }, letter).join('');
      return Array.from({ length: count }, (_, index) =>
        oneMessageThread(alice, `thread${index}z ${Array.from({ length: words }, word).join(' ')}`, 1 + index),
      );
    };
    /** The number of segments in the index's structure record (FTS5 keeps it in row 10 of its %_data table). */
    const segments = (index: string) => {
      const record = inspect().prepare(`SELECT block FROM ${index}_data WHERE id = 10`).pluck().get() as Buffer;
      // A 4-byte cookie, then the second version's 4-byte mark if there is one, then the levels and the segments.
      let offset = record.subarray(4, 8).equals(Buffer.from([0xff, 0, 0, 1])) ? 8 : 4;
      const varint = () => {
        let value = 0;
        for (;;) {
          const byte = record[offset++]!;
          value = value * 128 + (byte & 0x7f);
          if (byte < 0x80) return value;
        }
      };
      varint();
      return varint();
    };
    /** The leaf pages of the index's segments (a %_data id: segment << 37, height and other kinds above bit 31). */
    const leafPages = (db: Database.Database) =>
      new Set(
        db
          .prepare(
            "SELECT (id >> 37) || '/' || (id & 2147483647) FROM node_text_data WHERE id >> 37 > 0 AND (id >> 31) & 63 = 0",
          )
          .pluck()
          .all() as string[],
      );
    /** FTS5's answer to a merge: two changes or more, and it merged something. */
    const mergeChanges = (db: Database.Database, index: string) => {
      const total = db.prepare('SELECT total_changes()').pluck();
      const before = total.get() as number;
      db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('merge', 16)`).run();
      return (total.get() as number) - before;
    };
    const integrityCheck = () => {
      for (const index of ['node_text', 'title_text'])
        inspect().prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('integrity-check', 1)`).run();
    };

    it('are set, in the file, not to merge at commits, by a migration of a file of the schema before', async () => {
      mkdirSync(dirname(path), { recursive: true });
      const old = inspect();
      for (const sql of SQLITE_MIGRATIONS.slice(0, 13)) old.exec(sql);
      old.pragma('user_version = 13');
      old.close();

      await open().close();

      // FTS5 keeps its settings in the index's own table: any connection to the file merges as the store says.
      for (const index of ['node_text', 'title_text'])
        expect(inspect().prepare(`SELECT k, v FROM ${index}_config WHERE k LIKE '%merge' ORDER BY k`).all()).toEqual([
          { k: 'automerge', v: 0 },
          { k: 'crisismerge', v: 64 },
        ]);
    });

    it('grow by a segment a write, merged by none of the writes, then merged in steps, one at a time, until FTS5 has nothing left', async () => {
      const store = open();
      const threads = wordy(40, 3_000);
      const counts: number[] = [];
      // One thread per import is one transaction and no turn of the event loop: no merge step runs in between.
      for (const thread of threads) {
        await store.importThreads([thread]);
        counts.push(segments('node_text'));
      }
      expect(counts).toEqual(threads.map((_, index) => counts[0]! + index));

      const observer = inspect();
      const turns: number[] = [];
      let seen = leafPages(observer);
      let merging = true;
      const turn = () => {
        const pages = leafPages(observer);
        turns.push([...pages].filter((page) => !seen.has(page)).length);
        seen = pages;
        if (merging) setImmediate(turn);
      };
      setImmediate(turn);
      await store.whenIndexesMerged();
      merging = false;

      // In steps, one at a time: the pages appear over many turns.
      expect(turns.reduce((sum, pages) => sum + pages, 0)).toBeGreaterThan(6 * MERGE_STEP_PAGES);
      expect(turns.filter((pages) => pages > 0).length).toBeGreaterThan(6);
      expect(segments('node_text')).toBeLessThan(4);
      for (const index of ['node_text', 'title_text']) expect(mergeChanges(inspect(), index)).toBeLessThan(2);
      integrityCheck();
      for (const [index, thread] of threads.entries())
        expect((await store.searchThreads(alice, [`thread${index}z`], 5)).map((hit) => hit.threadId)).toEqual([
          thread.threadId,
        ]);
    });

    it('are merged by a thread of their own: a write made during its step waits for the step to end, not for its lock on the event loop', async () => {
      const store = open();
      const threads = wordy(20, 200);
      // The thread started (it does with the first steps) and the merges done, then more segments to merge.
      for (const thread of threads.slice(0, 10)) await store.importThreads([thread]);
      await store.whenIndexesMerged();
      for (const thread of threads.slice(10)) await store.importThreads([thread]);
      // The turn in which the next step starts.
      await new Promise(setImmediate);
      const stored = () => inspect().prepare('SELECT COUNT(*) FROM threads').pluck().get();

      const next = oneMessageThread(alice, 'written after the step', 100);
      const importing = store.importThreads([next]);
      const written = stored();
      await importing;

      expect(written).toBe(20);
      expect(stored()).toBe(21);
      expect((await store.searchThreads(alice, ['step'], 5)).map((hit) => hit.threadId)).toEqual([next.threadId]);
      await store.whenIndexesMerged();
      integrityCheck();
    });

    it('are merged only when FTS5 would find a merge due, as its structure record tells', async () => {
      await open().close();
      const db = inspect();
      const due = (index: string) =>
        mergeDue(db.prepare(`SELECT block FROM ${index}_data WHERE id = 10`).pluck().get() as Buffer, 4);
      /** FTS5's own answer, undone: a merge step that changes anything. */
      const fts5Due = (index: string) => {
        db.exec('BEGIN');
        try {
          return mergeChanges(db, index) >= 2;
        } finally {
          db.exec('ROLLBACK');
        }
      };
      const seen = { due: 0, notDue: 0 };
      // Segments of 5 pages: a step of 8 pages leaves a merge of 4 under way (a level's `nMerge`), the next ends it.
      for (const [count, thread] of wordy(40, 2_000).entries()) {
        const [node] = Object.values(thread.graph.nodes);
        db.prepare('INSERT INTO node_text (rowid, content) VALUES (?, ?)').run(count + 1, node!.content);
        if (count % 3 === 2) db.prepare("INSERT INTO node_text (node_text, rank) VALUES ('merge', 8)").run();
        const expected = fts5Due('node_text');
        expect(due('node_text')).toBe(expected);
        seen[expected ? 'due' : 'notDue'] += 1;
      }
      expect(seen.due).toBeGreaterThan(3);
      expect(seen.notDue).toBeGreaterThan(3);
      expect(due('title_text')).toBe(false);
      // The tests' own segment count reads the same record; a record not read is due.
      expect(mergeDue(Buffer.from([0, 0, 0, 1, 0x81]), 4)).toBe(true);
    });

    it('start no step after a write that leaves nothing due: the next write goes ahead at once', async () => {
      const store = open();
      const threads = wordy(12, 200);
      // The thread started and the merges done, then one segment more in each index, which makes no merge due.
      for (const thread of threads.slice(0, 10)) await store.importThreads([thread]);
      await store.whenIndexesMerged();
      await store.importThreads([threads[10]!]);
      for (const index of ['node_text', 'title_text'])
        expect(
          mergeDue(inspect().prepare(`SELECT block FROM ${index}_data WHERE id = 10`).pluck().get() as Buffer, 4),
        ).toBe(false);
      // The turn in which a step would start.
      await new Promise(setImmediate);
      const stored = () => inspect().prepare('SELECT COUNT(*) FROM threads').pluck().get();

      const importing = store.importThreads([threads[11]!]);
      const written = stored();
      await importing;

      expect(written).toBe(12);
    });

    it('keep search whole through many imports and deletes, merged between them', async () => {
      const store = open();
      const threads = wordy(120, 40);
      for (let start = 0; start < threads.length; start += 30)
        await store.importThreads(threads.slice(start, start + 30));
      for (const thread of threads.slice(0, 10)) await store.deleteThread(thread.threadId);
      await store.whenIndexesMerged();

      integrityCheck();
      expect(segments('node_text')).toBeLessThan(8);
      for (const [index, thread] of threads.entries())
        expect((await store.searchThreads(alice, [`thread${index}z`], 5)).map((hit) => hit.threadId)).toEqual(
          index < 10 ? [] : [thread.threadId],
        );
    });

    it("wait for no other connection's write lock: a refused step tries again later, and merges once it is free", async () => {
      const store = open();
      for (const thread of wordy(10, 200)) await store.importThreads([thread]);
      const before = segments('node_text');
      const other = inspect();
      other.exec('BEGIN IMMEDIATE');

      // A step that waited for the lock would hold these turns for the store's busy timeout, 5 s: a bound of half of
      // it, thousands of times what 20 turns take, tells the two apart on any machine.
      const started = performance.now();
      for (let turn = 0; turn < 20; turn += 1) await new Promise(setImmediate);
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(segments('node_text')).toBe(before);
      other.exec('COMMIT');

      await store.whenIndexesMerged();
      expect(segments('node_text')).toBeLessThan(before);
    });

    it('stop merging when the store closes, and the next open merges what is left', async () => {
      const store = open();
      for (const thread of wordy(10, 200)) await store.importThreads([thread]);
      const before = segments('node_text');

      await store.close();
      for (let turn = 0; turn < 20; turn += 1) await new Promise(setImmediate);

      expect(segments('node_text')).toBe(before);
      await store.whenIndexesMerged();
      await open().whenIndexesMerged();
      expect(segments('node_text')).toBeLessThan(before);
    });
  });

  it('walks the matches of the terms as whole words from the newest and stops at the page, sorting nothing', async () => {
    const store = open();
    const owner = 'did:example:alice';
    const rivers = Array.from({ length: 30 }, (_, index) => oneMessageThread(owner, `a river ${index}`, 1 + index));
    const newest = oneMessageThread(owner, 'rivers only', 100);
    await store.importThreads([...rivers, newest]);
    const found = async (limit: number) =>
      (await store.searchThreads(owner, ['river'], limit)).map((hit) => hit.threadId);

    // The whole word fills a page of 5: the newest message, which holds only a longer word, is left out.
    expect(await found(5)).toEqual(
      rivers
        .slice(-5)
        .map((thread) => thread.threadId)
        .reverse(),
    );
    // It does not fill one of 50: the words "river" begins are looked for too.
    expect(await found(50)).toEqual([newest, ...rivers.reverse()].map((thread) => thread.threadId));

    const statements = prepareStatements(inspect());
    const steps = inspect()
      .prepare(`EXPLAIN QUERY PLAN ${statements.searchNodes.source}`)
      .all({ ownerDid: owner, match: '"river"', limit: 20 })
      .map((row) => (row as { detail: string }).detail);
    expect(steps[0]).toMatch(/^SCAN node_text VIRTUAL TABLE INDEX/);
    expect(steps.filter((step) => step.includes('TEMP B-TREE'))).toEqual([]);
  });

  it('refuses a file whose schema is newer than it knows', () => {
    open();
    inspect().pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);

    expect(() => SqliteStore.open(path)).toThrow(/newer/);
  });

  it('recovers, after a crash in the middle of a stream, the text persisted before it', async () => {
    const clock = new TestClock();
    // The crashed process: its connection is never closed (until the test ends), its stream never finished.
    const crashed = open();
    const driver = await ThreadDriver.create(crashed, clock);
    const { assistantNodeId } = await driver.prompt('Tell me a story');
    await driver.stream(assistantNodeId, 'Once upon');
    await driver.stream(assistantNodeId, 'Once upon a time');

    const restarted = open();
    const now = clock.now();

    expect(await restarted.interruptStreamingNodes(now)).toEqual([driver.threadId]);
    const stored = await loadSound(restarted, driver.threadId);
    expect(stored.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Once upon a time' });
    expect(stored.graph.version).toBe(driver.graph.version + 1);
    expect(stored.updatedAt).toBe(now);
  });

  it('writes a batch of streamed text in one transaction: when an entry fails, none is written', async () => {
    const clock = new TestClock();
    const store = open();
    const [one, two] = [await ThreadDriver.create(store, clock), await ThreadDriver.create(store, clock)];
    const first = await one.prompt('First');
    const second = await two.prompt('Second');
    // The database refuses the batch's last entry, as a full disk could refuse any of them.
    inspect().exec(`
      CREATE TRIGGER refuse_poison BEFORE INSERT ON streamed_text WHEN NEW.text = 'poison'
      BEGIN SELECT RAISE(ABORT, 'poisoned content'); END`);

    const batch = [
      { threadId: one.threadId, nodeId: first.assistantNodeId, offset: 0, text: 'Written alone?' },
      { threadId: two.threadId, nodeId: second.assistantNodeId, offset: 0, text: 'poison' },
    ];
    await expect(store.saveStreamedText(batch)).rejects.toThrow(/poisoned content/);

    await one.expectStoreToMatch();
    await two.expectStoreToMatch();
  });

  it('refuses on one connection a change that a commit on another connection made stale', async () => {
    const clock = new TestClock();
    const [one, two] = [open(), open()];
    const driver = await ThreadDriver.create(one, clock);
    const base = emptyGraph(driver.threadId);
    const plan = (prefix: string) =>
      planPrompt(base, {
        userNodeId: `msg_${prefix}_user`,
        userPrompt: prefix,
        assistantNodeId: `msg_${prefix}_answer`,
        createdAt: clock.now(),
      });

    await one.commit(plan('one'), { updatedAt: clock.now() });

    await expect(two.commit(plan('two'), { updatedAt: clock.now() })).rejects.toSatisfy(StoreConflictError.isInstance);
    expect((await loadSound(two, driver.threadId)).graph.rootNodeId).toBe('msg_one_user');
  });
});
