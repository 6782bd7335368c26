import { parentPort, workerData } from 'node:worker_threads';
import { jsonArrayItems } from '../threads/json-array-items.js';
import { packThread } from '../threads/packed-threads.js';
import { readThreadBatches } from '../threads/thread-importer.js';
import { openImportSource } from './import-source.js';
import type { ImportWorkerData, ReaderMessage } from './import-reader.js';

/**
 * The thread that reads a document for `cpp-server import` (import-reader.ts): it opens the file, splits, parses and
 * converts its conversations, and posts them a batch at a time, at most `ahead` batches before the ones the import
 * has taken (each taken batch is a message back), so that it holds no more than that whatever the file's size.
 */
const port = parentPort!;
const { path, format, now, ahead } = workerData as ImportWorkerData;
let credits = ahead;
let waiting: (() => void) | undefined;
port.on('message', () => {
  credits += 1;
  waiting?.();
});

async function credit(): Promise<void> {
  while (credits === 0) await new Promise<void>((resolve) => (waiting = resolve));
  credits -= 1;
}

function post(message: ReaderMessage): void {
  port.postMessage(message);
}

try {
  const source = await openImportSource(path);
  post({ type: 'opened', name: source.name, size: source.size });
  try {
    for await (const batch of readThreadBatches(jsonArrayItems(source.bytes), { format, now })) {
      await credit();
      const { threads, ...counts } = batch;
      post({ type: 'batch', ...counts, bytesRead: source.bytesRead, threads: threads.map(packThread) });
    }
  } finally {
    source.close();
  }
  post({ type: 'end' });
} catch (error) {
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  post({ type: 'error', name, message });
}
