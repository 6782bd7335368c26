import type { ThreadGraph, ThreadSummary, TreeChange } from '@promethea/cpp-protocol';

/** A thread's metadata, beside its graph. */
export interface ThreadRecord {
  threadId: string;
  /** The DID that created the thread. */
  ownerDid: string;
  /** The first prompt, shortened; empty until then. */
  title: string;
  createdAt: number;
  updatedAt: number;
}

export interface StoredThread extends ThreadRecord {
  graph: ThreadGraph;
}

/** Metadata that changes with a commit. */
export interface CommitMeta {
  updatedAt: number;
  /** Set on the commit of the first prompt. */
  title?: string;
}

/** The text streamed so far into one `streaming` node. */
export interface StreamingContent {
  threadId: string;
  nodeId: string;
  content: string;
}

/**
 * Where conversations live. Small on purpose: every adapter (memory, SQLite, PostgreSQL) passes one contract
 * suite. Structural changes arrive as whole `TreeChange`s and are committed atomically with an optimistic version
 * check, so a crash or a concurrent writer can never leave a half-spliced tree.
 */
export interface ConversationStore {
  /** Creates an empty thread (version 0). Throws `StoreConflictError` when the id is taken. */
  createThread(record: ThreadRecord): Promise<void>;

  /**
   * The thread with its whole graph, or `undefined`. Each `childrenIds` lists the children in the order they were
   * first committed: stores derive it from the children's `parentId`, so it cannot disagree with them.
   */
  loadThread(threadId: string): Promise<StoredThread | undefined>;

  /** The owner's threads, most recently updated first (ties: greater thread id first, i.e. newer ULID). */
  listThreads(ownerDid: string): Promise<ThreadSummary[]>;

  /** The thread holding a node: node ids are unique across all threads. */
  findNodeThread(nodeId: string): Promise<string | undefined>;

  /**
   * Writes every node of the change (insert or replace), the root, the head and the version, in one transaction.
   * Throws `StoreConflictError`, writing nothing, when the thread does not exist, its stored version is not
   * `change.baseVersion`, or a node's id is already used in another thread. `meta.title` replaces the title only
   * when given.
   */
  commit(change: TreeChange, meta: CommitMeta): Promise<void>;

  /**
   * Persists the text streamed so far into `streaming` nodes, in one transaction for the whole batch, so that a
   * server can save every running answer at once instead of paying a transaction per stream. Not a structural
   * change: neither a version nor an `updatedAt` moves. An entry whose node is no longer streaming, or is not in
   * the thread named, is left untouched while the others apply, so a late batch cannot undo a commit. An empty
   * batch does nothing. When a batch names a node more than once, its last entry wins.
   */
  saveStreamingContents(batch: readonly StreamingContent[]): Promise<void>;

  /**
   * Crash recovery at start: every node still `streaming` becomes `interrupted` with the text last persisted, and
   * each thread concerned gets one new version and `updatedAt = now`. Returns the ids of those threads, sorted.
   */
  interruptStreamingNodes(now: number): Promise<string[]>;

  /** Idempotent. Every other method rejects once the store is closed. */
  close(): Promise<void>;
}
