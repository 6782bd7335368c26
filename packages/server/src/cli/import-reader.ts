import { Worker } from 'node:worker_threads';
import { ImportDocumentError, type ImportFormat } from '@promethea/cpp-protocol';
import { JsonDocumentError } from '../threads/json-array-items.js';
import { type PackedThread, unpackThread } from '../threads/packed-threads.js';
import { type ThreadBatch, UnrecognisedImportError } from '../threads/thread-importer.js';

/** What the reading thread is told. */
export interface ImportWorkerData {
  path: string;
  format: ImportFormat | undefined;
  now: number;
  /** How many batches it may post before the first is taken. */
  ahead: number;
}

/** What the reading thread posts: the document opened, then its batches, then its end or what went wrong. */
export type ReaderMessage =
  | { type: 'opened'; name: string; size: number }
  | { type: 'batch'; format: ImportFormat; items: number; bytesRead: number; threads: PackedThread[] }
  | { type: 'end' }
  | { type: 'error'; name: string; message: string };

/** A batch of threads, and how far into the document its reading had come. */
export interface ReadBatch extends ThreadBatch {
  bytesRead: number;
}

/** A document being read by a thread of its own. */
export interface ImportReader {
  /** What is read, for messages: the file, or the file inside the archive. */
  name: string;
  /** The document's size in bytes (uncompressed). */
  size: number;
  /** Its threads a batch at a time; once: the thread ends with the iteration, however it ends. */
  batches: AsyncIterable<ReadBatch>;
  /** Ends the thread, when the batches were never iterated. */
  close(): Promise<void>;
}

/**
 * Batches read ahead: the writes take about twice the reading's time, so that two keep the store from waiting on the
 * reader while what is held stays a few batches (64 conversations of 20 messages are about 0.9 MB of text).
 */
const BATCHES_AHEAD = 2;

/**
 * The reading thread's young generation: most of what it allocates (an element's text, its parse, its conversion)
 * is garbage once the batch is posted. V8's default (32 MB and more) went to the process's peak RSS: 236 MB with 8
 * against 264 MB without, importing 66 MB.
 */
const READER_YOUNG_GENERATION_MB = 8;

/**
 * Reads the document at `path` (`openImportSource`: a file, or the conversations of a ChatGPT export's .zip) on a
 * worker thread, which splits, parses and converts it while this thread writes what it read before (issue 37:
 * reading and converting were a third of an import's CPU on the thread that writes). Resolves once the document is
 * open; rejects with what opening it threw.
 */
export async function openImportReader(path: string, format: ImportFormat | undefined): Promise<ImportReader> {
  const workerData: ImportWorkerData = { path, format, now: Date.now(), ahead: BATCHES_AHEAD };
  const worker = new Worker(new URL('./import-worker.js', import.meta.url), {
    workerData,
    resourceLimits: { maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB },
  });
  const messages: ReaderMessage[] = [];
  let wake: (() => void) | undefined;
  const push = (message: ReaderMessage) => {
    messages.push(message);
    wake?.();
  };
  worker.on('message', push);
  worker.on('error', (error) => push({ type: 'error', name: error.name, message: error.message }));
  worker.on('exit', (code) => push({ type: 'error', name: 'Error', message: `the reading thread exited (${code})` }));
  async function next(): Promise<ReaderMessage> {
    while (messages.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    return messages.shift()!;
  }
  const close = async () => {
    await worker.terminate();
  };

  const opened = await next();
  if (opened.type !== 'opened') {
    await close();
    throw readerError(opened);
  }
  async function* batches(): AsyncGenerator<ReadBatch> {
    try {
      for (;;) {
        const message = await next();
        if (message.type === 'end') return;
        if (message.type !== 'batch') throw readerError(message);
        worker.postMessage('more');
        const { threads, ...counts } = message;
        yield { ...counts, threads: threads.map(unpackThread) };
      }
    } finally {
      await close();
    }
  }
  return { name: opened.name, size: opened.size, batches: batches(), close };
}

/** The error the reading thread met, as the import would have met it on this one. */
function readerError(message: ReaderMessage): Error {
  if (message.type !== 'error') return new Error(`the reading thread posted ${message.type} out of turn`);
  switch (message.name) {
    case 'UnrecognisedImportError':
      return new UnrecognisedImportError();
    case 'ImportDocumentError':
      return new ImportDocumentError(message.message);
    case 'JsonDocumentError':
      return new JsonDocumentError(message.message);
    default:
      return new Error(message.message);
  }
}
