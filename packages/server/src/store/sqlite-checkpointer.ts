import { endSqliteThread, type SqliteThread, startSqliteThread } from './sqlite-thread.js';

/** What the checkpointing thread is told (besides where the driver is). */
interface CheckpointerData {
  filename: string;
  intervalMs: number;
}

/** The thread's code (see `startSqliteThread`). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.filename);
const timer = setInterval(() => {
  // PASSIVE copies what it can without waiting for, or blocking, the writer; what it cannot, the next one copies.
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints a SQLite file's write-ahead log from a thread of its own. A checkpoint copies the log's pages into
 * the database file and syncs both to disk; left to the connection that writes (SQLite's automatic checkpoint), it
 * runs inside a commit, on the event loop: with a thousand streams saving their text, a checkpoint came with nearly
 * every batch and doubled its time (27 ms a batch against 13 with the checkpoints in this thread, in a stand-alone
 * test of the statements; the bench's event-loop delay p99 at 1,000 streams: 35 and 56 ms against 55 and 76).
 */
export class SqliteCheckpointer {
  private running: SqliteThread | undefined;
  private closed = false;

  constructor(
    private readonly filename: string,
    private readonly intervalMs: number,
  ) {}

  /**
   * Starts the thread, once, with the store's first write: until then the log holds nothing to copy, and a thread
   * costs a Node start (about 0.1 s of CPU) that a server started to be read, or not used, need not pay.
   */
  wrote(): void {
    if (this.running || this.closed) return;
    const workerData: CheckpointerData = { filename: this.filename, intervalMs: this.intervalMs };
    this.running = startSqliteThread(WORKER_SOURCE, workerData);
    // It must not keep a process alive that is done with its store without closing it.
    this.running.worker.unref();
  }

  /** Whether the thread was started (by a write) and not closed since. */
  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Stops checkpointing and closes the thread's connection; resolves once the thread has ended. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.running) return;
    const running = this.running;
    this.running = undefined;
    await endSqliteThread(running);
  }
}
