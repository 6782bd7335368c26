import type {
  Attachment,
  MemberRole,
  SearchHit,
  ShareLinkSummary,
  ShareScope,
  TextPart,
  ThreadGraph,
  ThreadMember,
  ThreadSummary,
  ToolCall,
  TreeChange,
} from '@promethea/cpp-protocol';

/** A thread's metadata, beside its graph. */
export interface ThreadRecord {
  threadId: string;
  /** The DID that created the thread. */
  ownerDid: string;
  /** The title the owner gave (CPP_THREAD_RENAME), else the first prompt, shortened; empty until either. */
  title: string;
  createdAt: number;
  updatedAt: number;
}

export interface StoredThread extends ThreadRecord {
  graph: ThreadGraph;
}

/** An invite to a thread (docs/PROTOCOL.md §29.7), as stored: its token only as its SHA-256. */
export interface InviteRecord {
  inviteId: string;
  threadId: string;
  /** Hex SHA-256 of the token: the token itself is never stored. */
  tokenHash: string;
  role: MemberRole;
  createdAt: number;
  expiresAt: number;
  maxUses: number;
  uses: number;
}

/** A read-only share link (docs/PROTOCOL.md §29.10), as stored: its token only as its SHA-256. */
export interface ShareLinkRecord {
  linkId: string;
  threadId: string;
  /** The identity that made it, whose limit of links it counts against. */
  ownerDid: string;
  /** Hex SHA-256 of the token: the token itself is never stored. */
  tokenHash: string;
  scope: ShareScope;
  createdAt: number;
  /** What the link shows, taken when it was made: JSON of a `ShareSnapshot`. */
  snapshot: string;
}

/** A place in the thread list's order: threads sort by `updatedAt` descending, then `threadId` descending. */
export interface ThreadPosition {
  updatedAt: number;
  threadId: string;
}

/** Which threads of an owner to list: at most `limit`, those after `after` when given. */
export interface ThreadPage {
  limit: number;
  after?: ThreadPosition | undefined;
}

export interface OwnedThreadSummary {
  ownerDid: string;
  summary: ThreadSummary;
}

/** Metadata that changes with a commit. */
export interface CommitMeta {
  updatedAt: number;
  /** Set on the commit of a rename, and of the first prompt of a thread that has no title yet. */
  title?: string;
}

/**
 * Text streamed into one part of a `streaming` node since its last save: the part's characters from `offset` on, in
 * UTF-16 code units as CPP_STREAM_CHUNK offsets are.
 */
export interface StreamedText {
  threadId: string;
  nodeId: string;
  /** The node's content (absent) or its reasoning: each part is saved and spelled by itself. */
  part?: TextPart;
  /** How much of the part's text was saved before: `text` follows it. */
  offset: number;
  text: string;
}

/**
 * An uploaded file (docs/PROTOCOL.md §27): its identity's until a committed prompt carries it, then its thread's. Its
 * bytes are kept once per SHA-256, however many attachments have them.
 */
export interface AttachmentRecord extends Attachment {
  /** The identity that uploaded it. */
  ownerDid: string;
  /** The thread whose prompt carries it; `null` while no committed prompt does. */
  threadId: string | null;
  createdAt: number;
}

/**
 * An upload being kept (`ConversationStore.openAttachment`): its bytes are written in order, then it is finished or
 * given up. Until it is finished nothing of it is visible, and whatever ends it, nothing of it is left but what
 * `finish` kept.
 */
export interface AttachmentUpload {
  /**
   * Takes the next bytes, which the store may hold until the upload ends (the caller must not change them). The next
   * call waits for the promise: it resolves when the store can take more, not when these are on disk.
   */
  write(bytes: Uint8Array): Promise<void>;
  /**
   * Keeps the file the bytes written make, as `record` says (its `size` and `sha256` are the caller's, computed from
   * the same bytes), its thread `null`, and the bytes unless bytes of that SHA-256 are kept already. Throws
   * `StoreConflictError` when the id is taken.
   */
  finish(record: AttachmentRecord): Promise<void>;
  /**
   * Ends the upload, which is given up unless `finish` kept it: nothing else of it stays (no temporary file, no open
   * handle). Called once it is over, whatever happened, even while a write is in progress; idempotent.
   */
  close(): Promise<void>;
}

/** Keeps a file whose bytes are all at hand (an import's), as an upload of one piece. */
export async function putAttachment(
  store: ConversationStore,
  record: AttachmentRecord,
  bytes: Uint8Array,
): Promise<void> {
  const upload = await store.openAttachment(bytes.length);
  try {
    await upload.write(bytes);
    await upload.finish(record);
  } finally {
    await upload.close();
  }
}

/**
 * Where conversations live. Small on purpose: every adapter (memory, SQLite, PostgreSQL) passes one contract
 * suite. Structural changes arrive as whole `TreeChange`s and are committed atomically with an optimistic version
 * check, so a crash or a concurrent writer can never leave a half-spliced tree.
 */
export interface ConversationStore {
  /**
   * Creates an empty thread (version 0). Throws `StoreConflictError` when the id is taken, or was taken by a thread
   * since deleted: a deleted thread's id is retired for good (docs/PROTOCOL.md §25.2).
   */
  createThread(record: ThreadRecord): Promise<void>;

  /**
   * The thread with its whole graph, or `undefined`. Each `childrenIds` lists the children in the order they were
   * first committed: stores derive it from the children's `parentId`, so it cannot disagree with them.
   */
  loadThread(threadId: string): Promise<StoredThread | undefined>;

  /**
   * A page of the identity's threads, its own and those it is a member of (each of these with its `role`), most
   * recently updated first (ties: greater thread id first, i.e. newer ULID): at most `page.limit` of them, those
   * after `page.after` in that order when given. The SQL stores read each kind from an index (own threads: (owner,
   * updatedAt, threadId); shared ones: (did, threadId) of the members), and merge the two pages.
   */
  listThreads(did: string, page: ThreadPage): Promise<ThreadSummary[]>;

  /** The thread's members other than its owner, in the order they were first added; none for an unknown thread. */
  members(threadId: string): Promise<ThreadMember[]>;

  /** The role of `did` among the thread's members; `undefined` when it is none (its owner is not a member). */
  memberRole(threadId: string, did: string): Promise<MemberRole | undefined>;

  /**
   * Makes `did` a member of the thread with `role`, or changes the role of a member (which keeps its place in the
   * order). False, changing nothing, when there is no such thread. Deleting the thread removes its members.
   */
  setMember(threadId: string, did: string, role: MemberRole): Promise<boolean>;

  /** Removes `did` from the thread's members; false when it was not one. */
  removeMember(threadId: string, did: string): Promise<boolean>;

  /** Stores a new invite (its `uses` 0); false, storing nothing, when there is no such thread. */
  createInvite(invite: InviteRecord): Promise<boolean>;

  /** The thread's invites still usable at `now` (not expired, uses left), oldest first. Deleting the thread removes them. */
  invites(threadId: string, now: number): Promise<InviteRecord[]>;

  /** Removes the invite; false when the thread has no such invite. */
  revokeInvite(threadId: string, inviteId: string): Promise<boolean>;

  /**
   * Takes one use of the invite whose token hashes to `tokenHash`, atomically, when it is usable at `now`: the
   * invite after the use, else `undefined` (none, revoked, expired or used up). Two at once never take its last use.
   */
  useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined>;

  /** The invite whose token hashes to `tokenHash` when it is usable at `now`, taking no use (a join looks first). */
  findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined>;

  /** Stores a new share link; false, storing nothing, when there is no such thread. */
  createShareLink(link: ShareLinkRecord): Promise<boolean>;

  /** The thread's share links, oldest first. Deleting the thread removes them. */
  shareLinks(threadId: string): Promise<ShareLinkSummary[]>;

  /** How many share links `ownerDid` has made that are still there, across its threads. */
  countShareLinks(ownerDid: string): Promise<number>;

  /** Removes the share link; false when the thread has no such link. */
  revokeShareLink(threadId: string, linkId: string): Promise<boolean>;

  /** The share link whose token hashes to `tokenHash`, with its snapshot; `undefined` when there is none (any more). */
  findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined>;

  /** How many threads the owner has, counting no further than `upTo` (a quota needs no more). */
  countThreads(ownerDid: string, upTo: number): Promise<number>;

  /** One thread's summary, as `listThreads` lists it, with its owner; `undefined` when there is no such thread. */
  threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined>;

  /**
   * The owner's threads whose title or message text holds every term (`searchTerms`: each term begins a word of
   * it), at most `limit` hits: title hits first (most recently updated thread first), then messages, the one first
   * stored last first. A message's first `SEARCHED_TEXT_LENGTH` code units are searched, as last committed (an
   * answer that is streaming, as its last commit left it). No terms: no hits. Another owner's threads are never
   * seen. A store may return only some of very many matching messages (docs/PROTOCOL.md §25.3).
   */
  searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]>;

  /**
   * Deletes the thread with every node, every piece of streamed text and every attachment (bytes no other attachment
   * has go too), and retires its id, in one transaction: no
   * thread of that id is created or imported again. Its node ids are free again. False when there was no such thread.
   */
  deleteThread(threadId: string): Promise<boolean>;

  /**
   * Creates every thread with its whole graph (nodes in `nodesInTreeOrder`, at version 1): all of them or, throwing,
   * none, and none is listed, searched or loaded before all are (a store may write them in several transactions and
   * serve other calls between them, as the SQLite store does). Throws `StoreConflictError` when a thread id or a node id is already used, or a
   * thread id is retired.
   */
  importThreads(threads: readonly StoredThread[]): Promise<void>;

  /**
   * As `importThreads`, for more threads than fit in memory: the batches are written as they come, all in one
   * transaction, committed once the last has been written; when a batch is refused or `batches` throws, nothing is
   * imported. Meant for a store that does nothing else meanwhile (`cpp-server import`): the SQLite store's one
   * connection stays inside that transaction until it settles, so another operation on the same store would join
   * it. Resolves with the number of threads imported.
   */
  importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number>;

  /** The thread holding a node: node ids are unique across all threads. */
  findNodeThread(nodeId: string): Promise<string | undefined>;

  /**
   * Writes every node of the change (insert or replace), deletes its removed nodes of the thread (a deleted branch)
   * with their streamed pieces, and writes the root, the head and the version, in one transaction. The attachments
   * its nodes carry become the thread's; those of the thread no node carries any more are deleted, and with them
   * bytes no other attachment has. Throws `StoreConflictError` too when a node carries an attachment that is gone
   * or is another thread's.
   * Throws `StoreConflictError`, writing nothing, when the thread does not exist, its stored version is not
   * `change.baseVersion`, or a node's id is already used in another thread. `meta.title` replaces the title only
   * when given.
   */
  commit(change: TreeChange, meta: CommitMeta): Promise<void>;

  /**
   * Saves the text streamed into `streaming` nodes since their last save, in one transaction for the whole batch:
   * a server saves every running answer at once, and writes only what each one streamed since (rewriting each
   * answer's whole text every time grows with the answers, tens of megabytes a second at a thousand streams). Not
   * a structural change: neither a version nor an `updatedAt` moves. Each entry saves `text` as the text of the
   * node's part (its content, or its reasoning: each part by itself, as below) from `offset` on, and is skipped when its node is no longer streaming or is not in the thread named, while
   * the others apply, so a late batch cannot undo a commit. A node's text is then its pieces written in order of
   * offset, each from its offset on, up to the first that would leave a gap (`spellStreamedText`): a save retried
   * at the same offset replaces the first, a piece after a lost one is not part of it. Within a batch, a later
   * entry for the same node and offset wins. An empty batch does nothing. The commit that ends an answer writes
   * its whole text; its pieces go with that commit.
   */
  saveStreamedText(batch: readonly StreamedText[]): Promise<void>;

  /**
   * The threads with a node still `streaming`, sorted: where a cluster looks for answers that no server writes any
   * more (docs/cluster.md). Read from an index of streaming nodes: cheap however many threads are stored.
   */
  streamingThreads(): Promise<string[]>;

  /**
   * Replaces the tool calls of a `streaming` node with `toolCalls` (empty: none), as a call of the answer begins or
   * changes state. Not a structural change, like `saveStreamedText`; skipped when the node no longer streams or is
   * not in the thread named, so a late save cannot undo a commit. The commit that ends the answer writes its calls.
   */
  saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void>;

  /**
   * Crash recovery at start: every node still `streaming` becomes `interrupted` with the text and reasoning last saved, and
   * each thread concerned gets one new version and `updatedAt = now`; its tool calls are cut at that text as a halt
   * cuts them (`cutToolCalls`: a call that was running is `interrupted`, never run again). Returns the ids of those
   * threads, sorted.
   */
  interruptStreamingNodes(now: number): Promise<string[]>;

  /**
   * Begins keeping an uploaded file whose bytes arrive in pieces (`AttachmentUpload`), so that a store can write them
   * as they come rather than after the last; `putAttachment` keeps bytes all at hand. `size`: its length when it is
   * known before its bytes (a request's `Content-Length`), so that a store that gathers them makes room once; the
   * bytes written decide.
   */
  openAttachment(size?: number): Promise<AttachmentUpload>;

  /** The records of those ids that exist, in the order asked. */
  loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]>;

  /** The bytes of that SHA-256, or `undefined` when no attachment has them any more. */
  attachmentBytes(sha256: string): Promise<Uint8Array | undefined>;

  /** The bytes the identity uploaded since `since` (ms), of the attachments still kept: a daily quota reads it. */
  uploadedBytesSince(ownerDid: string, since: number): Promise<number>;

  /**
   * Deletes the attachments no committed prompt carried that were uploaded before `createdBefore`, with bytes no
   * other attachment has. Returns how many attachments went.
   */
  deleteUnusedAttachments(createdBefore: number): Promise<number>;

  /** Idempotent. Every other method rejects once the store is closed. */
  close(): Promise<void>;
}
