import {
  type ShareLinkSummary,
  nodesInTreeOrder,
  type MemberRole,
  type SearchHit,
  type ThreadMember,
  type ThreadSummary,
  type ToolCall,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { Pool, PoolClient } from 'pg';
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
import { gatheredUpload } from './gathered-upload.js';
import { assembleGraph } from './graph-records.js';
import * as attachments from './postgres-attachments.js';
import { createPool, type PostgresConnectionOptions } from './postgres-connection.js';
import { migrate } from './postgres-migrations.js';
import { POSTGRES_STATEMENTS as SQL } from './postgres-statements.js';
import { inTransaction } from './postgres-transaction.js';
import {
  fromNodeColumns,
  type NodeColumns,
  recoveredToolCalls,
  type StreamingNodeRow,
  type ThreadRow,
  toNodeRow,
  toolCallsColumn,
} from './sql-rows.js';
import { StoreConflictError } from './store-conflict-error.js';
import { mergeThreadPages } from './thread-pages.js';
import { endedAnswerIds, piecesByNode, spellParts, withStreamedText, type TextPieceRow } from './streamed-text.js';

export interface PostgresStoreOptions extends PostgresConnectionOptions {
  /** Told about the schema migrations run at open. */
  onProgress?: (message: string) => void;
}

/**
 * SQLSTATEs of a lost race: serialization failure, deadlock, unique violation. The row lock on the thread makes
 * them unlikely, but a database that still reports one has refused the change as a whole, which is a conflict.
 */
const LOST_RACE_CODES = new Set(['40001', '40P01', '23505']);

/**
 * A search walks the messages stored last, this many of every identity, from the newest (docs/PROTOCOL.md §25.3):
 * a word in most messages fills its page there, whatever the history's size; the older matches of a rarer word come
 * from the full-text index.
 */
const SEARCH_WINDOW = 1_000;

/**
 * Writes wait for the thread's row lock, then read the latest committed version: READ COMMITTED semantics, asked
 * for explicitly so that a database configured with another default isolation does not change them.
 */
const BEGIN_READ_COMMITTED = 'BEGIN ISOLATION LEVEL READ COMMITTED';

/** One snapshot for a thread's header and its nodes, even while other connections commit. */
const FOREIGN_KEY_VIOLATION = '23503';
const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/**
 * Conversations in PostgreSQL, for several server processes sharing one database. A commit locks its thread's row,
 * so concurrent writers to one thread queue up and all but the first find the version moved on.
 */
export class PostgresStore implements ConversationStore {
  private closing: Promise<void> | undefined;

  /** Connects a pool and brings the schema up to date (see `migrate`). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = createPool(options);
    try {
      await migrate(pool, options);
      return new PostgresStore(pool);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  private constructor(private readonly pool: Pool) {}

  async createThread(record: ThreadRecord): Promise<void> {
    await insertThread(this.pool, record);
  }

  async loadThread(threadId: string): Promise<StoredThread | undefined> {
    return inTransaction(this.pool, (client) => loadInTransaction(client, threadId), BEGIN_SNAPSHOT);
  }

  async listThreads(did: string, { limit, after }: ThreadPage): Promise<ThreadSummary[]> {
    const page = (own: string, shared: string, parameters: unknown[]) =>
      inTransaction(
        this.pool,
        async (client) =>
          mergeThreadPages(
            (await client.query<ThreadSummary>(own, parameters)).rows,
            (await client.query<ThreadSummary>(shared, parameters)).rows,
            limit,
          ),
        BEGIN_SNAPSHOT,
      );
    if (after === undefined) return page(SQL.selectFirstThreads, SQL.selectFirstSharedThreads, [did, limit]);
    return page(SQL.selectThreadsAfter, SQL.selectSharedThreadsAfter, [did, limit, after.updatedAt, after.threadId]);
  }

  async members(threadId: string): Promise<ThreadMember[]> {
    return (await this.pool.query<ThreadMember>(SQL.selectMembers, [threadId])).rows;
  }

  async memberRole(threadId: string, did: string): Promise<MemberRole | undefined> {
    return (await this.pool.query<{ role: MemberRole }>(SQL.selectMemberRole, [threadId, did])).rows[0]?.role;
  }

  async setMember(threadId: string, did: string, role: MemberRole): Promise<boolean> {
    try {
      return ((await this.pool.query(SQL.upsertMember, [threadId, did, role])).rowCount ?? 0) > 0;
    } catch (error) {
      // The thread was deleted between the check and the insert: its foreign key refuses the member.
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
      throw error;
    }
  }

  async createShareLink(link: ShareLinkRecord): Promise<boolean> {
    const { linkId, threadId, ownerDid, tokenHash, scope, createdAt, snapshot } = link;
    const values = [linkId, threadId, ownerDid, tokenHash, scope, createdAt, snapshot];
    try {
      return ((await this.pool.query(SQL.insertShareLink, values)).rowCount ?? 0) > 0;
    } catch (error) {
      // The thread was deleted between the check and the insert: its foreign key refuses the link.
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
      throw error;
    }
  }

  async shareLinks(threadId: string): Promise<ShareLinkSummary[]> {
    return (await this.pool.query<ShareLinkSummary>(SQL.selectShareLinks, [threadId])).rows;
  }

  async countShareLinks(ownerDid: string): Promise<number> {
    return (await this.pool.query<{ count: number }>(SQL.countShareLinks, [ownerDid])).rows[0]?.count ?? 0;
  }

  async revokeShareLink(threadId: string, linkId: string): Promise<boolean> {
    return ((await this.pool.query(SQL.deleteShareLink, [threadId, linkId])).rowCount ?? 0) > 0;
  }

  async findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined> {
    return (await this.pool.query<ShareLinkRecord>(SQL.selectShareLink, [tokenHash])).rows[0];
  }

  async createInvite(invite: InviteRecord): Promise<boolean> {
    const { inviteId, threadId, tokenHash, role, createdAt, expiresAt, maxUses, uses } = invite;
    const values = [inviteId, threadId, tokenHash, role, createdAt, expiresAt, maxUses, uses];
    try {
      return ((await this.pool.query(SQL.insertInvite, values)).rowCount ?? 0) > 0;
    } catch (error) {
      // The thread was deleted between the check and the insert: its foreign key refuses the invite.
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return false;
      throw error;
    }
  }

  async invites(threadId: string, now: number): Promise<InviteRecord[]> {
    return (await this.pool.query<InviteRecord>(SQL.selectInvites, [threadId, now])).rows;
  }

  async revokeInvite(threadId: string, inviteId: string): Promise<boolean> {
    return ((await this.pool.query(SQL.deleteInvite, [threadId, inviteId])).rowCount ?? 0) > 0;
  }

  async useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return (await this.pool.query<InviteRecord>(SQL.useInvite, [tokenHash, now])).rows[0];
  }

  async findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return (await this.pool.query<InviteRecord>(SQL.selectInvite, [tokenHash, now])).rows[0];
  }

  async removeMember(threadId: string, did: string): Promise<boolean> {
    return ((await this.pool.query(SQL.deleteMember, [threadId, did])).rowCount ?? 0) > 0;
  }

  async countThreads(ownerDid: string, upTo: number): Promise<number> {
    return (await this.pool.query<{ count: number }>(SQL.countThreads, [ownerDid, upTo])).rows[0]?.count ?? 0;
  }

  async threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined> {
    const [row] = (await this.pool.query<ThreadSummary & { ownerDid: string }>(SQL.selectThreadSummary, [threadId]))
      .rows;
    if (!row) return undefined;
    const { ownerDid, ...summary } = row;
    return { ownerDid, summary };
  }

  async searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]> {
    if (terms.length === 0) return [];
    // Terms are words of letters and digits (searchTerms), a phrase's joined by spaces: none is an operator of
    // tsquery. A phrase's words follow one another (<->).
    const query = terms
      .map(
        (term) =>
          `(${term
            .split(' ')
            .map((word) => `${word}:*`)
            .join(' <-> ')})`,
      )
      .join(' & ');
    return inTransaction(
      this.pool,
      async (client) => {
        const titles = (await client.query<SearchHit>(SQL.searchTitles, [ownerDid, query, limit])).rows;
        const room = limit - titles.length;
        if (room === 0) return titles;
        const { newest } = (await client.query<{ newest: string }>(SQL.newestStored)).rows[0]!;
        const since = Number(newest) - SEARCH_WINDOW;
        const newer = (await client.query<SearchHit>(SQL.searchNewerNodes, [ownerDid, query, room, since])).rows;
        if (newer.length === room) return [...titles, ...newer];
        const values = [ownerDid, query, room - newer.length, since];
        const older = (await client.query<SearchHit>(SQL.searchOlderNodes, values)).rows;
        return [...titles, ...newer, ...older];
      },
      BEGIN_SNAPSHOT,
    );
  }

  async deleteThread(threadId: string): Promise<boolean> {
    return inTransaction(
      this.pool,
      async (client) => {
        // Its nodes and their pieces of text go with it (ON DELETE CASCADE); its files, with the bytes no other has.
        const { rowCount } = await client.query(SQL.deleteThread, [threadId, Date.now()]);
        await attachments.freeThread(client, threadId);
        return (rowCount ?? 0) > 0;
      },
      BEGIN_READ_COMMITTED,
    );
  }

  async importThreads(threads: readonly StoredThread[]): Promise<void> {
    try {
      await inTransaction(
        this.pool,
        async (client) => {
          await importInTransaction(client, threads);
        },
        BEGIN_READ_COMMITTED,
      );
    } catch (error) {
      if (isLostRace(error)) throw new StoreConflictError(`import lost a race: ${error.message}`, { cause: error });
      throw error;
    }
  }

  async importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number> {
    try {
      const imported = await inTransaction(
        this.pool,
        async (client) => {
          let imported = 0;
          for await (const threads of batches) {
            await importInTransaction(client, threads);
            imported += threads.length;
          }
          return imported;
        },
        BEGIN_READ_COMMITTED,
      );
      // A bulk import can multiply the tables' sizes: until autovacuum notices, the planner would plan a page of the
      // thread list for the tables it knew (a scan and a sort, 40 ms at 10,000 threads instead of an index range).
      await this.pool.query('ANALYZE threads, nodes');
      return imported;
    } catch (error) {
      if (isLostRace(error)) throw new StoreConflictError(`import lost a race: ${error.message}`, { cause: error });
      throw error;
    }
  }

  async findNodeThread(nodeId: string): Promise<string | undefined> {
    return (await this.pool.query<{ threadId: string }>(SQL.selectNodeThread, [nodeId])).rows[0]?.threadId;
  }

  async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    try {
      await inTransaction(this.pool, (client) => commitInTransaction(client, change, meta), BEGIN_READ_COMMITTED);
    } catch (error) {
      if (isLostRace(error))
        throw new StoreConflictError(`commit to thread ${change.threadId} lost a race: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
  }

  async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    const columns = [
      batch.map((entry) => entry.threadId),
      batch.map((entry) => entry.nodeId),
      batch.map((entry) => entry.offset),
      batch.map((entry) => entry.text),
      batch.map((entry) => entry.part ?? 'content'),
    ];
    await this.pool.query(SQL.insertStreamedText, columns);
  }

  async streamingThreads(): Promise<string[]> {
    const { rows } = await this.pool.query<{ threadId: string }>(SQL.selectStreamingThreads);
    return rows.map((row) => row.threadId);
  }

  async saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void> {
    await this.pool.query(SQL.updateStreamingToolCalls, [threadId, nodeId, toolCallsColumn(toolCalls)]);
  }

  async interruptStreamingNodes(now: number): Promise<string[]> {
    return inTransaction(this.pool, (client) => interruptInTransaction(client, now), BEGIN_READ_COMMITTED);
  }

  /** Gathered whole and inserted at the end: a row's `bytea` is written in one statement. */
  async openAttachment(size?: number): Promise<AttachmentUpload> {
    return gatheredUpload(size, async (record, bytes) => {
      await inTransaction(this.pool, (client) => attachments.put(client, record, bytes), BEGIN_READ_COMMITTED);
    });
  }

  async loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]> {
    return attachments.load(this.pool, ids);
  }

  async attachmentBytes(sha256: string): Promise<Uint8Array | undefined> {
    return attachments.bytes(this.pool, sha256);
  }

  async uploadedBytesSince(ownerDid: string, since: number): Promise<number> {
    return attachments.uploadedSince(this.pool, ownerDid, since);
  }

  async deleteUnusedAttachments(createdBefore: number): Promise<number> {
    return inTransaction(this.pool, (client) => attachments.freePending(client, createdBefore), BEGIN_READ_COMMITTED);
  }

  async close(): Promise<void> {
    this.closing ??= this.pool.end();
    await this.closing;
  }
}

async function insertThread(client: Pool | PoolClient, record: ThreadRecord): Promise<void> {
  const { threadId, ownerDid, title, createdAt, updatedAt } = record;
  const { rowCount } = await client.query(SQL.insertThread, [threadId, ownerDid, title, createdAt, updatedAt]);
  if (rowCount === 0) throw StoreConflictError.threadExists(threadId);
}

/**
 * Writes new threads with their whole graphs in two statements (a thread and a node a round trip each took 1.7 ms a
 * node, issue 37). Throws `StoreConflictError` when a thread id is taken or retired; a node id in use is a unique
 * violation, which `isLostRace` reads as one.
 */
async function importInTransaction(client: PoolClient, threads: readonly StoredThread[]): Promise<void> {
  if (threads.length === 0) return;
  const columns = <Row>(rows: readonly Row[], count: number, pick: (row: Row) => unknown[]) => {
    const arrays: unknown[][] = Array.from({ length: count }, () => []);
    for (const row of rows) for (const [index, value] of pick(row).entries()) arrays[index]!.push(value);
    return arrays;
  };
  const inserted = await client.query<{ threadId: string }>(
    SQL.importThreads,
    columns(threads, 7, ({ threadId, ownerDid, title, createdAt, updatedAt, graph }) => [
      threadId,
      ownerDid,
      title,
      createdAt,
      updatedAt,
      graph.rootNodeId,
      graph.activeHeadMessageId,
    ]),
  );
  if (inserted.rowCount !== threads.length) {
    const written = new Set(inserted.rows.map((row) => row.threadId));
    throw StoreConflictError.threadExists(threads.find((thread) => !written.has(thread.threadId))!.threadId);
  }
  const nodes = threads.flatMap(({ threadId, graph }) =>
    nodesInTreeOrder(graph).map((node, index) => ({ ...toNodeRow(threadId, node), seq: index + 1 })),
  );
  await client.query(
    SQL.importNodes,
    columns(nodes, 13, (row) => [
      row.nodeId,
      row.threadId,
      row.parentId,
      row.seq,
      row.role,
      row.content,
      row.status,
      row.createdAt,
      row.model,
      row.usage,
      row.reasoning,
      row.toolCalls,
      row.attachments,
    ]),
  );
  // A node's files, rare in an import, are bound to its thread one by one, as a commit binds them.
  for (const { threadId, graph } of threads)
    for (const node of Object.values(graph.nodes))
      if (node.attachments?.length) await attachments.carry(client, threadId, node);
}

async function loadInTransaction(client: PoolClient, threadId: string): Promise<StoredThread | undefined> {
  const [row] = (await client.query<ThreadRow>(SQL.selectThread, [threadId])).rows;
  if (!row) return undefined;
  const { ownerDid, title, createdAt, updatedAt, version, rootNodeId, headNodeId } = row;
  const nodes = (
    await client.query<NodeColumns>({ text: SQL.selectNodes, values: [threadId], rowMode: 'array' })
  ).rows.map(fromNodeColumns);
  const pieces = (await client.query<TextPieceRow>(SQL.selectStreamedText, [threadId])).rows;
  const graph = assembleGraph(
    { threadId, version, rootNodeId, activeHeadMessageId: headNodeId },
    withStreamedText(nodes, pieces),
  );
  return { threadId, ownerDid, title, createdAt, updatedAt, graph };
}

/** Throwing rolls the whole transaction back: a refused change writes nothing. */
async function commitInTransaction(client: PoolClient, change: TreeChange, meta: CommitMeta): Promise<void> {
  const { threadId } = change;
  const [locked] = (await client.query<{ version: number }>(SQL.lockThreadVersion, [threadId])).rows;
  if (locked?.version !== change.baseVersion)
    throw StoreConflictError.staleVersion(threadId, locked?.version, change.baseVersion);
  if (change.removedNodeIds?.length) await client.query(SQL.deleteNodes, [threadId, change.removedNodeIds]);
  for (const node of change.nodes) {
    const row = toNodeRow(threadId, node);
    const values = [
      row.nodeId,
      row.threadId,
      row.parentId,
      row.role,
      row.content,
      row.status,
      row.createdAt,
      row.model,
      row.usage,
      row.reasoning,
      row.toolCalls,
      row.attachments,
      row.context,
      row.authorDid,
    ];
    const { rowCount } = await client.query(SQL.upsertNode, values);
    if (rowCount === 0) throw StoreConflictError.nodeInOtherThread(node.id);
    await attachments.carry(client, threadId, node);
  }
  if (change.removedNodeIds?.length) await attachments.freeUncarried(client, threadId);
  const ended = endedAnswerIds(change.nodes);
  if (ended.length > 0) await client.query(SQL.deleteStreamedText, [ended]);
  const header = [
    threadId,
    change.rootNodeId,
    change.activeHeadMessageId,
    change.version,
    meta.updatedAt,
    meta.title ?? null,
  ];
  await client.query(SQL.updateThreadHeader, header);
}

async function interruptInTransaction(client: PoolClient, now: number): Promise<string[]> {
  const locked = (await client.query<{ threadId: string }>(SQL.lockStreamingThreads)).rows.map((row) => row.threadId);
  const streaming = (await client.query<StreamingNodeRow>(SQL.selectStreamingNodes, [locked])).rows;
  const nodeIds = streaming.map((node) => node.nodeId);
  const pieces = piecesByNode((await client.query<TextPieceRow>(SQL.selectStreamedTextOf, [nodeIds])).rows);
  const texts = streaming.map((node) =>
    spellParts({ content: node.content, reasoning: node.reasoning ?? '' }, pieces.get(node.nodeId) ?? []),
  );
  await client.query(SQL.interruptNodes, [
    nodeIds,
    texts.map((text) => text.content),
    texts.map((text) => text.reasoning || null),
    streaming.map((node, index) => recoveredToolCalls(node.toolCalls, texts[index]!.content)),
  ]);
  await client.query(SQL.deleteStreamedText, [nodeIds]);
  const threadIds = [...new Set(streaming.map((node) => node.threadId))].sort();
  await client.query(SQL.bumpThreadVersions, [threadIds, now]);
  return threadIds;
}

function isLostRace(error: unknown): error is Error & { code: string } {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' && LOST_RACE_CODES.has(error.code);
}
