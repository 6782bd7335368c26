import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type {
  ShareLinkSummary,
  MemberRole,
  SearchHit,
  ThreadMember,
  ThreadSummary,
  ToolCall,
  TreeChange,
} from '@promethea/cpp-protocol';
import Database from 'better-sqlite3';
import type {
  AttachmentRecord,
  AttachmentUpload,
  CommitMeta,
  ConversationStore,
  OwnedThreadSummary,
  StoredThread,
  StreamedText,
  ThreadPage,
  ThreadRecord,
  InviteRecord,
  ShareLinkRecord,
} from './conversation-store.js';
import { assembleGraph, importChange } from './graph-records.js';
import { AttachmentFiles } from './attachment-files.js';
import { SqliteAttachments } from './sqlite-attachments.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { SqliteIndexMerger } from './sqlite-index-merger.js';
import { migrate } from './sqlite-migrations.js';
import {
  importedNodeColumns,
  prepareStatements,
  STAGING_OWNER_PREFIX,
  type SqliteStatements,
} from './sqlite-statements.js';
import { fromNodeColumns, recoveredToolCalls, toNodeRow, toolCallsColumn } from './sql-rows.js';
import { StoreConflictError } from './store-conflict-error.js';
import { mergeThreadPages } from './thread-pages.js';
import { endedAnswerIds, piecesByNode, spellParts, withStreamedText } from './streamed-text.js';

/**
 * The FTS5 query that holds every term, each word as the beginning of a word (`prefix`) or as a whole word. Terms
 * are words of letters and digits (searchTerms), a phrase's joined by spaces, so quoting each word cannot change
 * the query's syntax; FTS5 joins a phrase's words with +.
 */
function ftsQuery(terms: readonly string[], words: 'prefix' | 'whole'): string {
  const suffix = words === 'prefix' ? '*' : '';
  return terms
    .map((term) =>
      term
        .split(' ')
        .map((word) => `"${word}"${suffix}`)
        .join(' + '),
    )
    .join(' ');
}

/**
 * The database's file, undefined for a database in memory (`:memory:`, or `''` for a temporary one), which no other
 * connection can open: its attachments' bytes stay in its rows and go with it (with a file, they are in a folder
 * beside it: `cpp.db` → `cpp.db.files`), and its index merges run on its own connection.
 */
function databaseFile(filename: string): string | undefined {
  return filename === ':memory:' || filename === '' ? undefined : filename;
}

/** How long a writer waits for another connection's lock before giving up with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStoreOptions {
  /** How often a thread of its own checkpoints the write-ahead log (see `SqliteCheckpointer`). Default 500 ms. */
  checkpointIntervalMs?: number;
}

const CHECKPOINT_INTERVAL_MS = 500;

/**
 * Threads an import writes per transaction: one synchronous transaction holds the event loop, and with it every
 * other client of the process (60 conversations of 20 messages held it 100–280 ms; issue 37).
 */
const IMPORT_SLICE_THREADS = 4;

/**
 * The store's own connection checkpoints only once the log reaches this many pages (64 MiB): never while the
 * checkpointing thread keeps up, and still if that thread fails or falls behind, so the log stays bounded.
 */
const FALLBACK_CHECKPOINT_PAGES = 16_384;

/**
 * Conversations in one SQLite file, in WAL mode so that readers never wait for the writer, and attachment bytes in
 * a folder beside it (`SqliteAttachments`). better-sqlite3 is synchronous; the methods stay Promise-returning because
 * that is the shape every adapter shares, and the attachment files' I/O is asynchronous.
 */
export class SqliteStore implements ConversationStore {
  private readonly statements: SqliteStatements;
  private readonly attachments: SqliteAttachments;
  private readonly merger: SqliteIndexMerger;

  /**
   * Opens (or creates, with its parent folders) the database file and brings its schema up to date; the thread
   * that checkpoints its log starts with the first write.
   */
  static open(filename: string, options: SqliteStoreOptions = {}): SqliteStore {
    mkdirSync(dirname(filename), { recursive: true });
    const db = new Database(filename, { timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('journal_mode = WAL');
      // In WAL mode NORMAL cannot corrupt the file; a power cut may only lose the last commits.
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
      migrate(db);
      return new SqliteStore(
        db,
        new SqliteCheckpointer(filename, options.checkpointIntervalMs ?? CHECKPOINT_INTERVAL_MS),
        databaseFile(filename),
      );
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(
    private readonly db: Database.Database,
    private readonly checkpointer: SqliteCheckpointer,
    /** Undefined for a database in memory (databaseFile). */
    filename: string | undefined,
  ) {
    this.statements = prepareStatements(db);
    this.attachments = new SqliteAttachments(db, filename ? new AttachmentFiles(`${filename}.files`) : undefined);
    this.merger = new SqliteIndexMerger(db, filename, BUSY_TIMEOUT_MS, () => this.checkpointer.wrote());
    // What an import interrupted by the end of the process had staged: no one ever saw it (importThreads).
    this.db
      .transaction(() => {
        for (const threadId of this.statements.selectStagedThreads.all()) this.dropStagedThread(threadId);
      })
      .immediate();
    this.merger.wrote();
  }

  async createThread(record: ThreadRecord): Promise<void> {
    await this.write(() => this.db.transaction(() => this.insertThread(record)).immediate());
    this.wroteText();
  }

  async loadThread(threadId: string): Promise<StoredThread | undefined> {
    // One read transaction: the header and the nodes come from the same snapshot even while another connection writes.
    return this.db.transaction(() => {
      const row = this.statements.selectThread.get(threadId);
      if (!row) return undefined;
      const { ownerDid, title, createdAt, updatedAt, version, rootNodeId, headNodeId } = row;
      const nodes = withStreamedText(
        this.statements.selectNodes.all(threadId).map(fromNodeColumns),
        this.statements.selectStreamedText.all(threadId),
      );
      const graph = assembleGraph({ threadId, version, rootNodeId, activeHeadMessageId: headNodeId }, nodes);
      return { threadId, ownerDid, title, createdAt, updatedAt, graph };
    })();
  }

  async listThreads(did: string, { limit, after }: ThreadPage): Promise<ThreadSummary[]> {
    return this.db.transaction(() => {
      const { statements } = this;
      if (after === undefined) {
        return mergeThreadPages(
          statements.selectFirstThreads.all({ ownerDid: did, limit }),
          statements.selectFirstSharedThreads.all({ did, limit }),
          limit,
        );
      }
      return mergeThreadPages(
        statements.selectThreadsAfter.all({ ownerDid: did, limit, ...after }),
        statements.selectSharedThreadsAfter.all({ did, limit, ...after }),
        limit,
      );
    })();
  }

  async members(threadId: string): Promise<ThreadMember[]> {
    return this.statements.selectMembers.all(threadId);
  }

  async memberRole(threadId: string, did: string): Promise<MemberRole | undefined> {
    return this.statements.selectMemberRole.get({ threadId, did });
  }

  async setMember(threadId: string, did: string, role: MemberRole): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.upsertMember.run({ threadId, did, role }));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async createShareLink(link: ShareLinkRecord): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.insertShareLink.run(link));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async shareLinks(threadId: string): Promise<ShareLinkSummary[]> {
    return this.statements.selectShareLinks.all(threadId);
  }

  async countShareLinks(ownerDid: string): Promise<number> {
    return this.statements.countShareLinks.get(ownerDid) ?? 0;
  }

  async revokeShareLink(threadId: string, linkId: string): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.deleteShareLink.run({ threadId, linkId }));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined> {
    return this.statements.selectShareLink.get(tokenHash);
  }

  async createInvite(invite: InviteRecord): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.insertInvite.run(invite));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async invites(threadId: string, now: number): Promise<InviteRecord[]> {
    return this.statements.selectInvites.all({ threadId, now });
  }

  async revokeInvite(threadId: string, inviteId: string): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.deleteInvite.run({ threadId, inviteId }));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    const invite = await this.write(() => this.statements.useInvite.get({ tokenHash, now }));
    if (invite) this.checkpointer.wrote();
    return invite;
  }

  async findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return this.statements.selectInvite.get({ tokenHash, now });
  }

  async removeMember(threadId: string, did: string): Promise<boolean> {
    const { changes } = await this.write(() => this.statements.deleteMember.run({ threadId, did }));
    this.checkpointer.wrote();
    return changes > 0;
  }

  async countThreads(ownerDid: string, upTo: number): Promise<number> {
    return this.statements.countThreads.get({ ownerDid, upTo }) ?? 0;
  }

  async threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined> {
    const row = this.statements.selectThreadSummary.get(threadId);
    if (!row) return undefined;
    const { ownerDid, ...summary } = row;
    return { ownerDid, summary };
  }

  async searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    return this.db.transaction(() => {
      const { searchTitles, searchNodes } = this.statements;
      const titles = searchTitles.all({ ownerDid, match: ftsQuery(terms, 'prefix'), limit });
      const room = limit - titles.length;
      if (room === 0) return titles;
      // FTS5 merges the whole list of every word a prefix begins before it can walk it: 12 ms for a word in 200,000
      // messages, growing with the history. A whole word's list is walked from its end and left at the page: when
      // the terms as whole words fill it, those are the hits (§25.3, long histories).
      const whole = searchNodes.all({ ownerDid, match: ftsQuery(terms, 'whole'), limit: room });
      const nodes =
        whole.length === room ? whole : searchNodes.all({ ownerDid, match: ftsQuery(terms, 'prefix'), limit: room });
      return [...titles, ...nodes];
    })();
  }

  async deleteThread(threadId: string): Promise<boolean> {
    const deleted = await this.write(() =>
      this.withFreedFiles(() =>
        this.db
          .transaction(() => {
            this.statements.unindexThreadNodes.run(threadId);
            this.statements.deleteThreadNodes.run(threadId);
            this.attachments.freeThread(threadId);
            const deleted = this.deleteThreadRow(threadId);
            if (deleted) this.statements.retireThreadId.run({ threadId, deletedAt: Date.now() });
            return deleted;
          })
          .immediate(),
      ),
    );
    if (deleted) this.wroteText();
    return deleted;
  }

  /**
   * A few threads per transaction, the event loop free between them, under staging owners that no identity lists,
   * searches or opens; then one short transaction gives them to their owners: all of them appear at once, or, when
   * a thread is refused or the hand-over finds fewer than it staged, none (the staged ones are deleted).
   */
  async importThreads(threads: readonly StoredThread[]): Promise<void> {
    const importId = randomUUID();
    const owners = [...new Set(threads.map(({ ownerDid }) => ownerDid))];
    const stagingOwner = (ownerDid: string) => `${STAGING_OWNER_PREFIX}${importId}/${owners.indexOf(ownerDid)}`;
    const staged: string[] = [];
    try {
      for (let start = 0; start < threads.length; start += IMPORT_SLICE_THREADS) {
        if (start > 0) await setImmediate();
        const slice = threads.slice(start, start + IMPORT_SLICE_THREADS);
        await this.write(() =>
          this.db
            .transaction(() => {
              for (const thread of slice) this.importThread({ ...thread, ownerDid: stagingOwner(thread.ownerDid) });
            })
            .immediate(),
        );
        staged.push(...slice.map(({ threadId }) => threadId));
        this.wroteText();
      }
      await this.write(() =>
        this.db
          .transaction(() => {
            let handed = 0;
            for (const ownerDid of owners)
              handed += this.statements.handOverThreads.run({ stagingOwner: stagingOwner(ownerDid), ownerDid }).changes;
            // Another process opening the same file deletes what it finds staged: then some are gone.
            if (handed !== threads.length)
              throw new Error(`import: ${threads.length - handed} staged threads vanished`);
          })
          .immediate(),
      );
    } catch (error) {
      await this.write(() =>
        this.db
          .transaction(() => {
            for (const threadId of staged) this.dropStagedThread(threadId);
          })
          .immediate(),
      );
      this.wroteText();
      throw error;
    }
    this.checkpointer.wrote();
  }

  async importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number> {
    // One transaction across the awaits between batches: better-sqlite3's transaction() takes a synchronous function.
    // No merge step starts while it is open.
    await this.write(() => this.db.exec('BEGIN IMMEDIATE'));
    let imported = 0;
    try {
      for await (const threads of batches) {
        for (const thread of threads) this.importThread(thread);
        imported += threads.length;
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      // Merge steps skip turns inside the transaction; crisismerge bounded its segments meanwhile.
      this.merger.wrote();
    }
    this.checkpointer.wrote();
    return imported;
  }

  async findNodeThread(nodeId: string): Promise<string | undefined> {
    return this.statements.selectNodeThread.get(nodeId);
  }

  async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    // IMMEDIATE takes the write lock before the version is read, so another connection cannot commit in between.
    await this.write(() =>
      this.withFreedFiles(() => this.db.transaction(() => this.commitInTransaction(change, meta)).immediate()),
    );
    this.wroteText();
  }

  async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    // One transaction, not one per entry: its cost (the WAL commit) is what grows with the number of streams.
    await this.write(() =>
      this.db.transaction(() => {
        for (const { part = 'content', ...entry } of batch) this.statements.insertStreamedText.run({ ...entry, part });
      })(),
    );
    this.checkpointer.wrote();
  }

  async streamingThreads(): Promise<string[]> {
    return this.statements.selectStreamingThreads.all().map((row) => row.threadId);
  }

  async saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void> {
    await this.write(() =>
      this.statements.updateStreamingToolCalls.run({ threadId, nodeId, toolCalls: toolCallsColumn(toolCalls) }),
    );
    this.checkpointer.wrote();
  }

  async interruptStreamingNodes(now: number): Promise<string[]> {
    const interrupted = await this.write(() => this.interruptInTransaction(now));
    if (interrupted.length > 0) this.wroteText();
    return interrupted;
  }

  async openAttachment(size?: number): Promise<AttachmentUpload> {
    const upload = await this.attachments.open(size);
    return {
      ...upload,
      // Its rows are written after its file, past the wait: a step started meanwhile may hold them on its lock.
      finish: async (record) => {
        await this.write(() => upload.finish(record));
        this.checkpointer.wrote();
      },
    };
  }

  async loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]> {
    return this.db.transaction(() => this.attachments.load(ids))();
  }

  async attachmentBytes(sha256: string): Promise<Uint8Array | undefined> {
    return this.attachments.bytes(sha256);
  }

  async uploadedBytesSince(ownerDid: string, since: number): Promise<number> {
    return this.attachments.uploadedSince(ownerDid, since);
  }

  async deleteUnusedAttachments(createdBefore: number): Promise<number> {
    const freed = await this.write(() =>
      this.withFreedFiles(() => this.db.transaction(() => this.attachments.freePending(createdBefore)).immediate()),
    );
    if (freed > 0) this.checkpointer.wrote();
    await this.attachments.sweep(Date.now());
    return freed;
  }

  /**
   * Resolves once the full-text indexes have no segments due to merge (SqliteIndexMerger): a file grown in bulk,
   * measured as a long-lived one would be.
   */
  whenIndexesMerged(): Promise<void> {
    return this.merger.merged();
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    await this.merger.close();
    // The last connection to close checkpoints what is left and removes the log: the checkpointer's goes first.
    await this.checkpointer.close();
    if (this.db.open) this.db.close();
  }

  /**
   * Runs a write, after the merge step under way if there is one (SqliteIndexMerger): meeting the step's lock, the
   * write would wait for it holding the event loop. Without one, at once, as called.
   */
  private async write<T>(write: () => T): Promise<T> {
    const step = this.merger.stepEnded();
    if (step) await step;
    return write();
  }

  /** A write that changed the full-text indexes: their new segments are merged by the merger's thread. */
  private wroteText(): void {
    this.checkpointer.wrote();
    this.merger.wrote();
  }

  /**
   * Runs a write transaction that may free attachments, then removes the files it freed. A removal that fails leaves
   * files no row names, which the sweep removes later: it must not report a committed change as failed.
   */
  private withFreedFiles<T>(write: () => T): T {
    try {
      return write();
    } finally {
      try {
        this.attachments.removeFreedFiles();
      } catch {}
    }
  }

  private insertThread(record: ThreadRecord): void {
    const { threadId, ownerDid, title, createdAt, updatedAt } = record;
    if (this.statements.isRetired.get(threadId) !== undefined) throw StoreConflictError.threadExists(threadId);
    const { changes, lastInsertRowid } = this.statements.insertThread.run({
      threadId,
      ownerDid,
      title,
      createdAt,
      updatedAt,
    });
    if (changes === 0) throw StoreConflictError.threadExists(threadId);
    this.statements.indexTitle.run({ rowid: lastInsertRowid, text: title });
  }

  /**
   * A new thread with its graph, as the commit of `importChange` would write it, without what a commit must check or
   * undo in a thread that has nodes already (an import's cost is these statements, 400,000 times for a heavy user).
   */
  private importThread(thread: StoredThread): void {
    this.insertThread(thread);
    const { threadId, graph } = thread;
    const { statements } = this;
    const change = importChange(thread);
    change.nodes.forEach((node, index) => {
      const row = toNodeRow(threadId, node);
      let rowid: number | bigint;
      try {
        rowid = statements.insertImportedNode.run(...importedNodeColumns(row, index + 1)).lastInsertRowid;
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
          throw StoreConflictError.nodeInOtherThread(node.id);
        throw error;
      }
      statements.indexNodeText.run(rowid, row.content);
      this.attachments.carry(threadId, node);
    });
    statements.updateThreadHeader.run({
      threadId,
      rootNodeId: graph.rootNodeId,
      headNodeId: graph.activeHeadMessageId,
      version: change.version,
      updatedAt: thread.updatedAt,
      title: null,
    });
  }

  /** The thread's row and its title in the index; its nodes and files are gone already. */
  private deleteThreadRow(threadId: string): boolean {
    this.statements.unindexThreadTitle.run(threadId);
    return this.statements.deleteThread.run(threadId).changes > 0;
  }

  /**
   * A thread of an import given up: as if never written. Its files become uploads again (PROTOCOL.md §25.5: kept
   * before the threads were created), and its id is not retired: no one saw it.
   */
  private dropStagedThread(threadId: string): void {
    this.statements.unindexThreadNodes.run(threadId);
    this.statements.deleteThreadNodes.run(threadId);
    this.attachments.release(threadId);
    this.deleteThreadRow(threadId);
  }

  /** Ends the answers left streaming, in one transaction: their text as far as it was saved, and their threads bumped. */
  private interruptInTransaction(now: number): string[] {
    return this.db
      .transaction(() => {
        const pieces = piecesByNode(this.statements.selectAllStreamedText.all());
        const threadIds = new Set<string>();
        const { statements } = this;
        for (const {
          nodeId,
          threadId,
          rowid,
          content,
          reasoning,
          toolCalls,
        } of statements.selectStreamingNodes.all()) {
          const text = spellParts({ content, reasoning: reasoning ?? '' }, pieces.get(nodeId) ?? []);
          statements.unindexNodeText.run({ rowid, text: content });
          statements.indexNodeText.run(rowid, text.content);
          statements.interruptStreamingNode.run({
            nodeId,
            content: text.content,
            reasoning: text.reasoning || null,
            toolCalls: recoveredToolCalls(toolCalls, text.content),
          });
          this.statements.deleteStreamedText.run(nodeId);
          threadIds.add(threadId);
        }
        const sorted = [...threadIds].sort();
        for (const threadId of sorted) this.statements.bumpThreadVersion.run({ threadId, updatedAt: now });
        return sorted;
      })
      .immediate();
  }

  /** Throwing rolls the whole transaction back: a refused change writes nothing. */
  private commitInTransaction(change: TreeChange, meta: CommitMeta): void {
    const { threadId } = change;
    const { statements } = this;
    const head = statements.selectThreadHead.get(threadId);
    if (head?.version !== change.baseVersion)
      throw StoreConflictError.staleVersion(threadId, head?.version, change.baseVersion);
    for (const nodeId of change.removedNodeIds ?? []) {
      statements.unindexNode.run({ nodeId, threadId });
      statements.deleteNode.run({ nodeId, threadId });
    }
    for (const node of change.nodes) {
      const stored = statements.selectStoredNode.get(node.id);
      if (stored !== undefined && stored.threadId !== threadId) throw StoreConflictError.nodeInOtherThread(node.id);
      const row = toNodeRow(threadId, node);
      const { lastInsertRowid } = statements.upsertNode.run(row);
      if (stored === undefined) statements.indexNodeText.run(lastInsertRowid, row.content);
      else if (stored.content !== row.content) {
        statements.unindexNodeText.run({ rowid: stored.rowid, text: stored.content });
        statements.indexNodeText.run(stored.rowid, row.content);
      }
      this.attachments.carry(threadId, node);
    }
    if (change.removedNodeIds?.length) this.attachments.freeUncarried(threadId);
    for (const nodeId of endedAnswerIds(change.nodes)) statements.deleteStreamedText.run(nodeId);
    if (meta.title != null && meta.title !== head.title) {
      statements.unindexTitle.run({ rowid: head.rowid, text: head.title });
      statements.indexTitle.run({ rowid: head.rowid, text: meta.title });
    }
    statements.updateThreadHeader.run({
      threadId,
      rootNodeId: change.rootNodeId,
      headNodeId: change.activeHeadMessageId,
      version: change.version,
      updatedAt: meta.updatedAt,
      title: meta.title ?? null,
    });
  }
}
