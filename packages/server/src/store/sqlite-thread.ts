import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A thread of the SQLite store with a connection of its own to the store's file (checkpoints, index merges), which
 * closes its connection and ends when it is sent `'close'`.
 */
export interface SqliteThread {
  readonly worker: Worker;
  /** Resolves when the thread has ended. */
  readonly exited: Promise<void>;
}

/**
 * Starts a thread running `source`, code kept as a string so that the same code runs whether the calling module is
 * the compiled JavaScript or its TypeScript source (under the test runner). It is given `workerData` with `driver`
 * added: where better-sqlite3 is, resolved here, since an evaluated thread resolves modules from the process's folder.
 */
export function startSqliteThread(source: string, workerData: object): SqliteThread {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(source, { eval: true, workerData: { ...workerData, driver } });
  return { worker, exited: new Promise((resolve) => worker.once('exit', () => resolve())) };
}

/**
 * Closes the thread's connection and waits for its end. The thread is held again meanwhile: a process with nothing
 * else to do would otherwise exit before the thread closed its connection, in the middle of its shutdown.
 */
export async function endSqliteThread({ worker, exited }: SqliteThread): Promise<void> {
  worker.ref();
  worker.postMessage('close');
  await exited;
}
