import {
  CPPError,
  ErrorCode,
  ImportDocumentError,
  readImportDocument,
  type ImportFormat,
  type ImportedThread,
  type ThreadSummary,
} from '@promethea/cpp-protocol';
import { threadSize } from '../engine/thread-size.js';
import type { ConversationStore, StoredThread } from '../store/conversation-store.js';

/** The limits an import respects, as a prompt does (the server's `ServerLimits` are these and more); 0 turns one off. */
export interface ImportLimits {
  maxThreadsPerDid: number;
  maxNodesPerThread: number;
  maxThreadBytes: number;
  maxPromptLength: number;
}

/**
 * Imports the threads of a document for `ownerDid` (PROTOCOL.md §25.5): all of them, in one transaction, or none.
 * A malformed document is INVALID_FRAME and one over a limit RATE_LIMITED, before anything is written.
 */
export async function importThreads(
  store: ConversationStore,
  ownerDid: string,
  format: ImportFormat,
  document: unknown,
  limits: ImportLimits,
): Promise<ThreadSummary[]> {
  const threads = readDocument(format, document);
  await checkLimits(store, ownerDid, threads, limits);
  const stored: StoredThread[] = threads.map(({ title, createdAt, updatedAt, graph }) => ({
    threadId: graph.threadId,
    ownerDid,
    title,
    createdAt,
    updatedAt,
    graph,
  }));
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

function readDocument(format: ImportFormat, document: unknown): ImportedThread[] {
  try {
    return readImportDocument(format, document, Date.now());
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
  for (const [index, { graph }] of threads.entries()) {
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
  }
  if (maxThreadsPerDid <= 0) return;
  const owned = await store.countThreads(ownerDid, maxThreadsPerDid);
  if (owned + threads.length > maxThreadsPerDid) {
    throw new CPPError(
      ErrorCode.RATE_LIMITED,
      `${ownerDid} owns ${owned} threads and the document holds ${threads.length}; the limit is ${maxThreadsPerDid}`,
    );
  }
}
