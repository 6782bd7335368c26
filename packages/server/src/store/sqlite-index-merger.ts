import type { Database, Statement } from 'better-sqlite3';

/** The store's FTS5 indexes (sqlite-migrations.ts), whose merges run here rather than at commits (migration 14). */
export const FULL_TEXT_INDEXES = ['node_text', 'title_text'] as const;

/**
 * Leaf pages (4 KB) of index one merge step writes. FTS5 stops a merge only between two words, so a step also writes
 * the rest of the list of the word it is in: when the largest segments merge, a word found in every message is
 * written in one step (127 ms of CPU at 2,000,000 messages). 16 pages took 2–3 ms of CPU a step in a file of 5,000
 * threads of 20 messages, where a merge of the same segments all at once held the event loop 228 ms.
 */
export const MERGE_STEP_PAGES = 16;

/** How soon a step refused by another connection's write lock tries again. */
const BUSY_RETRY_MS = 100;

/**
 * Merges the segments of the full-text indexes in bounded steps, one per turn of the event loop, until FTS5 reports
 * no level with enough segments to merge. Each transaction that writes an index adds a segment to it; FTS5 merges
 * them itself by default (`automerge`), inside the commit of whichever write makes a level full: 20–65 ms of some of
 * an import's transactions, and of a prompt's commit whenever it was the one. Migration 14 turns that off, and sets
 * `crisismerge` to 64: the bound on a level's segments if no step runs (a process that never yields, one transaction
 * across many batches), where FTS5 merges them all within the write.
 */
export class SqliteIndexMerger {
  private readonly steps: Map<string, Statement<[number]>>;
  private readonly totalChanges: Statement<[], number>;
  /** Indexes written since they last reported nothing to merge. */
  private readonly pending = new Set<string>();
  /** Cancels the next step, when one is scheduled. */
  private cancel: (() => void) | undefined;
  private closed = false;
  private readonly idle: Array<() => void> = [];

  constructor(
    private readonly db: Database,
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
  }

  /** The indexes were written (or the file opened): merge what is due, from the next turn of the event loop. */
  wrote(): void {
    if (this.closed) return;
    for (const index of FULL_TEXT_INDEXES) this.pending.add(index);
    if (this.cancel === undefined) this.schedule();
  }

  /** Resolves once no index has segments due to merge, or the merger is closed. */
  merged(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Stops the steps; what is left to merge is merged after the file's next open. */
  close(): void {
    this.closed = true;
    this.pending.clear();
    this.cancel?.();
    this.cancel = undefined;
    this.settle();
  }

  /** The next step, at the next turn of the event loop or after `delayMs`. */
  private schedule(delayMs = 0): void {
    // Not unref'd: a process that ends without closing its store waits for the steps (seconds), not a merge at once.
    if (delayMs > 0) {
      const timer = setTimeout(() => this.step(), delayMs);
      this.cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => this.step());
      this.cancel = () => clearImmediate(immediate);
    }
  }

  private step(): void {
    this.cancel = undefined;
    // A transaction held across turns (importThreadBatches) would take the step in; its end calls wrote() again.
    if (this.db.inTransaction) return;
    const [index] = this.pending;
    if (index === undefined) return;
    const before = this.totalChanges.get()!;
    // Waiting for another connection's lock would hold the event loop up to the busy timeout: try again later.
    this.db.pragma('busy_timeout = 0');
    try {
      this.steps.get(index)!.run(MERGE_STEP_PAGES);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        this.schedule(BUSY_RETRY_MS);
        return;
      }
      // Merging is upkeep: a failure (a full disk) must not end the process. The next write tries again.
      this.pending.clear();
      this.settle();
      return;
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
    // FTS5's documented answer: fewer than two changes, and no level was due.
    if (this.totalChanges.get()! - before < 2) this.pending.delete(index);
    else this.onWrite();
    if (this.pending.size > 0) this.schedule();
    else this.settle();
  }

  private settle(): void {
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
