import type { Database, Statement } from 'better-sqlite3';
import { endSqliteThread, type SqliteThread, startSqliteThread } from './sqlite-thread.js';

/** The store's FTS5 indexes (sqlite-migrations.ts), whose merges run here rather than at commits (migration 14). */
export const FULL_TEXT_INDEXES = ['node_text', 'title_text'] as const;

type FullTextIndex = (typeof FULL_TEXT_INDEXES)[number];

/**
 * Leaf pages (4 KB) of index one merge step writes. FTS5 stops a merge only between two words, so a step also writes
 * the rest of the list of the word it is in: when the largest segments merge, a word found in every message is
 * written in one step (127 ms of CPU at 2,000,000 messages). A write of the store waits for the step it meets, so
 * steps are kept short: 16 pages took 2–3 ms of CPU a step in a file of 5,000 threads of 20 messages.
 */
export const MERGE_STEP_PAGES = 16;

/** FTS5's default `usermerge`: the fewest segments of a level that a merge takes as its input. */
const DEFAULT_USERMERGE = 4;

/** How soon a step refused by another connection's write lock tries again. */
const BUSY_RETRY_MS = 100;

/**
 * Whether FTS5's merge (`('merge', n)` with n > 0) would find work in an index's structure record (row 10 of its
 * %_data table): as fts5IndexMerge decides, a level whose merge is under way, unless a level before it holds more
 * segments, or else a level of at least `usermerge` segments (the tombstones of contentless-delete tables aside: these
 * indexes are not). Reading the record costs a row, where a step would cost a round trip to the thread and the write
 * lock to find nothing. A record it cannot read is taken as due: the step asks FTS5 itself.
 */
export function mergeDue(record: Uint8Array, usermerge: number): boolean {
  // SQLite's varints: 7 bits a byte, high bit set on all but the last, the ninth byte's 8 bits last.
  let offset = 0;
  const varint = (): number => {
    let value = 0;
    for (let length = 1; length <= 9; length += 1) {
      const byte = record[offset++];
      if (byte === undefined) throw new RangeError('the record ends in a varint');
      if (length === 9) return value * 256 + byte;
      value = value * 128 + (byte & 0x7f);
      if (byte < 0x80) return value;
    }
    return value;
  };
  try {
    // A 4-byte cookie, then, in the second version of the record, its 4-byte mark and 5 more varints a segment.
    const v2 = record[4] === 0xff && record[5] === 0 && record[6] === 0 && record[7] === 1;
    offset = v2 ? 8 : 4;
    const levels = varint();
    varint(); // segments
    varint(); // write counter
    let best = 0;
    for (let level = 0; level < levels; level += 1) {
      const merging = varint();
      const segments = varint();
      if (merging > 0) {
        if (merging > best) best = usermerge;
        break;
      }
      best = Math.max(best, segments);
      for (let field = 0; field < segments * (v2 ? 8 : 3); field += 1) varint();
    }
    return best >= usermerge;
  } catch {
    return true;
  }
}

/** What the merging thread is told (besides where the driver is). */
interface MergerData {
  filename: string;
  indexes: readonly FullTextIndex[];
  pages: number;
}

/** A step's outcome, as the merging thread posts it back. */
type StepResult = { changes: number } | { error: string };

/** The merging thread; `ready` once its connection is open. */
interface MergingThread extends SqliteThread {
  ready: boolean;
}

/**
 * The thread's code (see `startSqliteThread`). Its connection never waits for a lock (timeout 0): a step refused is
 * tried again later by the store, whose own writes would otherwise wait behind it.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename, { timeout: 0 });
db.pragma('synchronous = NORMAL');
const total = db.prepare('SELECT total_changes()').pluck();
const steps = new Map(workerData.indexes.map((index) => [
  index, db.prepare('INSERT INTO ' + index + ' (' + index + ", rank) VALUES ('merge', ?)"),
]));
parentPort.postMessage('ready');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const before = total.get();
    steps.get(message).run(workerData.pages);
    parentPort.postMessage({ changes: total.get() - before });
  } catch (error) {
    parentPort.postMessage({ error: error.code || String(error) });
  }
});
`;

/**
 * Merges the segments of the full-text indexes in bounded steps until FTS5 reports no level with enough segments to
 * merge. Each transaction that writes an index adds a segment to it; FTS5 merges them itself by default
 * (`automerge`), inside the commit of whichever write makes a level full: 20–65 ms of some of an import's
 * transactions, and of a prompt's commit whenever it was the one. Migration 14 turns that off, and sets
 * `crisismerge` to 64: the bound on a level's segments if no step runs (one transaction across many batches), where
 * FTS5 merges them all within the write.
 *
 * The steps run on a thread of their own, with its own connection, one at a time: a step that reaches the largest
 * segments writes a common word's whole list (FTS5 stops only between words: 127 ms at 2,000,000 messages), which on
 * the event loop held every client of the process (issue 37). The store's writes wait (asynchronously,
 * `stepEnded`) for a step under way rather than for its lock; its reads never wait (WAL). The thread starts with the
 * first step due (`mergeDue`): a file with nothing due starts none.
 */
export class SqliteIndexMerger {
  private readonly steps: Map<FullTextIndex, Statement<[number]>>;
  private readonly structures: Map<FullTextIndex, { record: Statement<[], Buffer>; usermerge: number }>;
  private readonly totalChanges: Statement<[], number>;
  /** Indexes written since they last reported nothing to merge. */
  private readonly pending = new Set<FullTextIndex>();
  /** Cancels the next step, when one is scheduled. */
  private cancel: (() => void) | undefined;
  private thread: MergingThread | undefined;
  /** Resolves when the step the thread is running ends; undefined when none is. */
  private step: { index: FullTextIndex; ended: Promise<void>; end: () => void } | undefined;
  private closed = false;
  private readonly idle: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    /** The database's file; undefined for one in memory, which steps on its own connection, between turns. */
    private readonly filename: string | undefined,
    /** The busy timeout the connection keeps outside steps. */
    private readonly busyTimeoutMs: number,
    /** Told after each step that wrote something: the log has pages to checkpoint. */
    private readonly onWrite: () => void,
  ) {
    this.steps = new Map(
      FULL_TEXT_INDEXES.map((index) => [
        index,
        db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('merge', ?)`),
      ]),
    );
    this.totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.structures = new Map(
      FULL_TEXT_INDEXES.map((index) => {
        const usermerge = db.prepare<[], number>(`SELECT v FROM ${index}_config WHERE k = 'usermerge'`).pluck().get();
        const record = db.prepare<[], Buffer>(`SELECT block FROM ${index}_data WHERE id = 10`).pluck();
        return [index, { record, usermerge: usermerge ?? DEFAULT_USERMERGE }];
      }),
    );
  }

  /**
   * The indexes were written, or the file opened (the last process to write it may have closed before its steps
   * were done): merge what is due, from the next turn of the event loop.
   */
  wrote(): void {
    if (this.closed) return;
    for (const index of FULL_TEXT_INDEXES) this.pending.add(index);
    if (this.cancel === undefined && this.step === undefined) this.schedule();
  }

  /**
   * When a step is under way: resolves once it ended, and before the next one starts. A write of the store made
   * meanwhile would wait for its lock holding the event loop. Undefined when none is: the write may go ahead.
   */
  stepEnded(): Promise<void> | undefined {
    return this.step?.ended;
  }

  /** Resolves once no index has segments due to merge, or the merger is closed. */
  merged(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Stops the steps, once the one under way ends; what is left to merge is merged after the file's next open. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    this.cancel?.();
    this.cancel = undefined;
    this.settle();
    if (!this.thread) return;
    const thread = this.thread;
    this.thread = undefined;
    await endSqliteThread(thread);
    this.endStep();
  }

  /** A step on this connection, without waiting for another's lock. */
  private stepHere(index: FullTextIndex): StepResult {
    const before = this.totalChanges.get()!;
    this.db.pragma('busy_timeout = 0');
    try {
      this.steps.get(index)!.run(MERGE_STEP_PAGES);
      return { changes: this.totalChanges.get()! - before };
    } catch (error) {
      return { error: (error as { code?: string }).code ?? String(error) };
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  private due(index: FullTextIndex): boolean {
    const { record, usermerge } = this.structures.get(index)!;
    const block = record.get();
    return block === undefined || mergeDue(block, usermerge);
  }

  /** The next step, at the next turn of the event loop or after `delayMs`. */
  private schedule(delayMs = 0): void {
    if (delayMs > 0) {
      const timer = setTimeout(() => this.start(), delayMs);
      this.cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => this.start());
      this.cancel = () => clearImmediate(immediate);
    }
  }

  private start(): void {
    this.cancel = undefined;
    // A transaction held across turns (importThreadBatches) would keep the step from the lock; its end calls wrote().
    if (this.db.inTransaction) return;
    for (const index of this.pending) if (!this.due(index)) this.pending.delete(index);
    const [index] = this.pending;
    if (index === undefined) {
      this.settle();
      return;
    }
    // A database in memory is this connection's alone: no other thread can open it.
    if (this.filename === undefined) {
      this.step = { index, ended: Promise.resolve(), end: () => {} };
      this.stepped(this.stepHere(index));
      return;
    }
    const thread = (this.thread ??= this.startThread(this.filename));
    // Starting a thread takes tens of ms: the writes made meanwhile go ahead, and the first step waits for it.
    if (!thread.ready) return;
    const { worker } = thread;
    // Not unref'd while steps are due: a process that ends without closing its store finishes them (seconds).
    worker.ref();
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    this.step = { index, ended, end };
    worker.postMessage(index);
  }

  private startThread(filename: string): MergingThread {
    const workerData: MergerData = { filename, indexes: FULL_TEXT_INDEXES, pages: MERGE_STEP_PAGES };
    const thread: MergingThread = { ...startSqliteThread(WORKER_SOURCE, workerData), ready: false };
    const { worker } = thread;
    worker.on('message', (message: 'ready' | StepResult) => {
      if (message !== 'ready') this.stepped(message);
      else {
        thread.ready = true;
        if (!this.closed && this.cancel === undefined) this.start();
      }
    });
    // A thread that cannot start (or dies) leaves the indexes unmerged, as a failed step does; search still works.
    // The next write starts another.
    worker.on('error', () => {
      this.thread = undefined;
      this.stepped({ error: 'thread' });
    });
    return thread;
  }

  private stepped(result: StepResult): void {
    const index = this.step?.index;
    // The writes that waited for this step go first (they resume before the next turn); the next step after them.
    this.endStep();
    if (this.closed) return;
    if ('error' in result) {
      if (result.error === 'SQLITE_BUSY') {
        this.schedule(BUSY_RETRY_MS);
        return;
      }
      // Merging is upkeep: a failure (a full disk) must not end the process. The next write tries again.
      this.pending.clear();
    } else if (result.changes < 2) {
      if (index !== undefined) this.pending.delete(index);
    } else this.onWrite();
    if (this.pending.size > 0) this.schedule();
    else this.settle();
  }

  private endStep(): void {
    this.step?.end();
    this.step = undefined;
  }

  private settle(): void {
    this.thread?.worker.unref();
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
