import {
  CPPError,
  ErrorCode,
  ImportDocumentError,
  readImportDocument,
  readImportItem,
  recogniseImportFormat,
  type ImportFormat,
  type ImportedThread,
  type ThreadSummary,
} from '@promethea/cpp-protocol';
import { setImmediate } from 'node:timers/promises';
import { DEFAULT_ATTACHMENT_LIMITS } from '../attachments/attachment-options.js';
import { threadSize } from '../engine/thread-size.js';
import type { ConversationStore, StoredThread } from '../store/conversation-store.js';
import { type ArchiveFiles, type ImportFilesContext, keepImportedFiles } from './import-files.js';
import type { JsonItem } from './json-array-items.js';

/** The limits an import respects, as a prompt does (the server's `ServerLimits` are these and more); 0 turns one off. */
export interface ImportLimits {
  maxThreadsPerDid: number;
  maxNodesPerThread: number;
  maxThreadBytes: number;
  maxPromptLength: number;
  files: ImportFilesContext['limits'];
}

/**
 * Imports the threads of a document for `ownerDid` (PROTOCOL.md §25.5): all of them or none, none seen before all are.
 * A malformed document is INVALID_FRAME and one over a limit RATE_LIMITED, before anything is written.
 */
export async function importThreads(
  store: ConversationStore,
  ownerDid: string,
  format: ImportFormat,
  document: unknown,
  limits: ImportLimits,
): Promise<ThreadSummary[]> {
  const threads = await readDocument(format, document);
  await checkLimits(store, ownerDid, threads, limits);
  const context = { store, ownerDid, limits: limits.files, now: Date.now() };
  await inSlices(threads, async (thread, index) => {
    try {
      await keepImportedFiles(thread, context);
    } catch (error) {
      if (error instanceof ImportDocumentError)
        throw new CPPError(ErrorCode.INVALID_FRAME, `payload.document: thread ${index + 1}: ${error.message}`);
      throw error;
    }
  });
  const stored = threads.map((thread) => storedThread(ownerDid, thread));
  await store.importThreads(stored);
  return stored.map(({ threadId, title, createdAt, updatedAt, graph }) => ({
    threadId,
    title,
    createdAt,
    updatedAt,
    version: 1,
    nodeCount: Object.keys(graph.nodes).length,
  }));
}

/** A document that is neither format, and no format was named. */
export class UnrecognisedImportError extends Error {
  override readonly name = 'UnrecognisedImportError';
  constructor() {
    super('neither a CPP thread export nor a ChatGPT conversations.json');
  }
}

/**
 * Threads read per batch of a streamed import: enough that a batch's costs (a message between threads, PostgreSQL's
 * statements) are shared, few enough that the threads holding batches stay small (256 held 100 MB more at the peak
 * of `cpp-server import`, whose reading thread holds a few batches besides the one written).
 */
const IMPORT_BATCH_THREADS = 64;

/** Threads of a document, read a batch at a time (`readThreadBatches`). */
export interface ThreadBatch {
  format: ImportFormat;
  threads: ImportedThread[];
  /** Elements of the document read so far, these threads' included. */
  items: number;
}

/**
 * The threads of a document read element by element (`jsonArrayItems`), a batch at a time: what is held at once is
 * one batch, whatever the document's size. The format is `format`, else told from the first element;
 * `ImportDocumentError` for a malformed element, `UnrecognisedImportError` for an unknown format.
 */
export async function* readThreadBatches(
  items: AsyncIterable<JsonItem>,
  options: { format?: ImportFormat | undefined; now: number },
): AsyncGenerator<ThreadBatch> {
  let { format } = options;
  let threads: ImportedThread[] = [];
  let read = 0;
  let reported = 0;
  for await (const { value, index, inArray } of items) {
    format ??= recogniseImportFormat(inArray ? [value] : value);
    if (format === undefined) throw new UnrecognisedImportError();
    const { now } = options;
    threads.push(...(inArray ? readImportItem(format, value, index, now) : readImportDocument(format, value, now)));
    read = index + 1;
    if (threads.length < IMPORT_BATCH_THREADS) continue;
    yield { format, threads, items: read };
    threads = [];
    reported = read;
  }
  if (format !== undefined && read > reported) yield { format, threads, items: read };
}

export interface StreamedImport {
  format: ImportFormat;
  /** Threads created. */
  threads: number;
}

/**
 * Imports threads read a batch at a time (`readThreadBatches`, maybe on another thread), for `ownerDid`: all of them
 * in one transaction, or none (whatever the batches throw). No limits: the operator's import (`cpp-server import`).
 * `onBatch` is told of each batch as its threads go to the store.
 */
export async function importThreadStream<Batch extends ThreadBatch>(
  store: ConversationStore,
  ownerDid: string,
  batches: AsyncIterable<Batch>,
  options: {
    onBatch?: (batch: Batch) => void;
    /** The archive the document came in, whose images its messages show. */
    archive?: ArchiveFiles | undefined;
    files?: ImportFilesContext['limits'];
  } = {},
): Promise<StreamedImport> {
  let format: ImportFormat | undefined;
  const now = Date.now();
  const files = { store, ownerDid, limits: options.files ?? DEFAULT_ATTACHMENT_LIMITS, archive: options.archive, now };
  async function* stored(): AsyncGenerator<StoredThread[]> {
    for await (const batch of batches) {
      format = batch.format;
      const threads: StoredThread[] = [];
      for (const thread of batch.threads) {
        await keepImportedFiles(thread, files);
        threads.push(storedThread(ownerDid, thread));
      }
      options.onBatch?.(batch);
      if (threads.length > 0) yield threads;
    }
  }
  const threads = await store.importThreadBatches(stored());
  return { format: format ?? 'chatgpt', threads };
}

function storedThread(ownerDid: string, { title, createdAt, updatedAt, graph }: ImportedThread): StoredThread {
  return { threadId: graph.threadId, ownerDid, title, createdAt, updatedAt, graph };
}

/**
 * Elements of a document read, or threads checked, between two turns of the event loop: reading and checking one
 * ChatGPT conversation of 20 messages takes about 2 ms, a frame's 60 of them over 100 ms, during which no other
 * client was served (issue 37); then checking the limits of all 60 and keeping their files took 20-30 ms more.
 */
const SLICE_ITEMS = 4;

/** `each` of the items in order, the event loop turning after every SLICE_ITEMS of them. */
async function inSlices<Item>(
  items: readonly Item[],
  each: (item: Item, index: number) => void | Promise<void>,
): Promise<void> {
  for (const [index, item] of items.entries()) {
    if (index > 0 && index % SLICE_ITEMS === 0) await setImmediate();
    await each(item, index);
  }
}

/** The document's threads, read element by element as `readImportDocument` would, the event loop turning between slices. */
async function readDocument(format: ImportFormat, document: unknown): Promise<ImportedThread[]> {
  const now = Date.now();
  try {
    if (!Array.isArray(document)) return readImportDocument(format, document, now);
    const threads: ImportedThread[] = [];
    await inSlices(document, (item, index) => {
      threads.push(...readImportItem(format, item, index, now));
    });
    return threads;
  } catch (error) {
    if (error instanceof ImportDocumentError)
      throw new CPPError(ErrorCode.INVALID_FRAME, `payload.document: ${error.message}`);
    throw error;
  }
}

async function checkLimits(
  store: ConversationStore,
  ownerDid: string,
  threads: readonly ImportedThread[],
  limits: ImportLimits,
): Promise<void> {
  const { maxThreadsPerDid, maxNodesPerThread, maxThreadBytes, maxPromptLength } = limits;
  await inSlices(threads, ({ graph }, index) => {
    const nodes = Object.values(graph.nodes);
    if (maxNodesPerThread > 0 && nodes.length > maxNodesPerThread) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${index + 1} of the document holds ${nodes.length} messages; the limit is ${maxNodesPerThread}`,
      );
    }
    const { bytes } = threadSize(graph);
    if (maxThreadBytes > 0 && bytes > maxThreadBytes) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${index + 1} of the document holds ${bytes} bytes of text; the limit is ${maxThreadBytes}`,
      );
    }
    const longPrompt =
      maxPromptLength > 0
        ? nodes.find((node) => node.role === 'user' && node.content.length > maxPromptLength)
        : undefined;
    if (longPrompt) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${index + 1} of the document has a prompt of ${longPrompt.content.length} characters; the limit is ${maxPromptLength}`,
      );
    }
  });
  if (maxThreadsPerDid <= 0) return;
  const owned = await store.countThreads(ownerDid, maxThreadsPerDid);
  if (owned + threads.length > maxThreadsPerDid) {
    throw new CPPError(
      ErrorCode.RATE_LIMITED,
      `${ownerDid} owns ${owned} threads and the document holds ${threads.length}; the limit is ${maxThreadsPerDid}`,
    );
  }
}
