import type { MemberRole, SearchHit, ShareLinkSummary, ThreadMember, ThreadSummary } from '@promethea/cpp-protocol';
import type { Database, Statement } from 'better-sqlite3';
import type {
  InviteRecord,
  OwnedThreadSummary,
  ShareLinkRecord,
  StreamedText,
  ThreadPosition,
} from './conversation-store.js';
import type { NodeColumns, NodeRow, StreamingNodeRow, ThreadRow } from './sql-rows.js';
import type { TextPieceRow } from './streamed-text.js';

export interface CommittedHeader {
  threadId: string;
  rootNodeId: string | null;
  headNodeId: string | null;
  version: number;
  updatedAt: number;
  /** `null` keeps the stored title. */
  title: string | null;
}

export type NewThreadRow = Omit<ThreadRow, 'rootNodeId' | 'headNodeId' | 'version'>;

/** Of each message, the characters the index holds (SQLite's substr, as the first index was built). */
const INDEXED_CHARACTERS = 100_000;

/** A thread's summary as lists show it; the node count is one range of the index nodes_by_thread. */
const SUMMARY_COLUMNS = `thread_id AS threadId, title, created_at AS createdAt, updated_at AS updatedAt, version,
  (SELECT COUNT(*) FROM nodes WHERE nodes.thread_id = threads.thread_id) AS nodeCount`;

/** A thread shared with the identity listing: its summary and the identity's role in it. */
export type SharedSummaryRow = ThreadSummary & { role: MemberRole };

/** The summary of a thread shared with `@did`, read through its membership. */
const SHARED_SUMMARY = `SELECT threads.thread_id AS threadId, threads.title, threads.created_at AS createdAt,
  threads.updated_at AS updatedAt, threads.version, thread_members.role,
  (SELECT COUNT(*) FROM nodes WHERE nodes.thread_id = threads.thread_id) AS nodeCount
  FROM thread_members JOIN threads ON threads.thread_id = thread_members.thread_id WHERE thread_members.did = @did`;

/** An invite's columns as an `InviteRecord`. */
const INVITE_COLUMNS = `invite_id AS inviteId, thread_id AS threadId, token_hash AS tokenHash, role, created_at AS createdAt,
  expires_at AS expiresAt, max_uses AS maxUses, uses`;

const SHARE_LINK_COLUMNS = `link_id AS linkId, thread_id AS threadId, owner_did AS ownerDid, token_hash AS tokenHash,
  scope, created_at AS createdAt, snapshot`;

/** The columns of an imported node, in the order of `insertImportedNode`'s parameters. */
type ImportedNodeColumns = [
  nodeId: string,
  threadId: string,
  parentId: string | null,
  seq: number,
  role: NodeRow['role'],
  content: string,
  reasoning: string | null,
  status: NodeRow['status'],
  createdAt: number,
  model: string | null,
  usage: string | null,
  toolCalls: string | null,
  attachments: string | null,
  context: string | null,
  authorDid: string | null,
];

/** A node's row as `insertImportedNode` takes it, `seq` its place in the thread. */
export function importedNodeColumns(row: NodeRow, seq: number): ImportedNodeColumns {
  const { nodeId, threadId, parentId, role, content, reasoning, status, createdAt, model, usage } = row;
  const { toolCalls, attachments, context, authorDid } = row;
  return [
    nodeId,
    threadId,
    parentId,
    seq,
    role,
    content,
    reasoning,
    status,
    createdAt,
    model,
    usage,
    toolCalls,
    attachments,
    context,
    authorDid,
  ];
}

/** Every statement the store runs, prepared once per connection. */
export interface SqliteStatements {
  insertThread: Statement<NewThreadRow>;
  isRetired: Statement<[string], number>;
  selectThread: Statement<[string], ThreadRow>;
  selectThreadHead: Statement<[string], ThreadHead>;
  selectFirstThreads: Statement<{ ownerDid: string; limit: number }, ThreadSummary>;
  selectThreadsAfter: Statement<ThreadPosition & { ownerDid: string; limit: number }, ThreadSummary>;
  countThreads: Statement<{ ownerDid: string; upTo: number }, number>;
  selectFirstSharedThreads: Statement<{ did: string; limit: number }, SharedSummaryRow>;
  selectSharedThreadsAfter: Statement<ThreadPosition & { did: string; limit: number }, SharedSummaryRow>;
  selectMembers: Statement<[string], ThreadMember>;
  selectMemberRole: Statement<{ threadId: string; did: string }, MemberRole>;
  upsertMember: Statement<{ threadId: string; did: string; role: MemberRole }>;
  deleteMember: Statement<{ threadId: string; did: string }>;
  insertInvite: Statement<InviteRecord>;
  insertShareLink: Statement<ShareLinkRecord>;
  selectShareLinks: Statement<[string], ShareLinkSummary>;
  countShareLinks: Statement<[string], number>;
  deleteShareLink: Statement<{ threadId: string; linkId: string }>;
  selectShareLink: Statement<[string], ShareLinkRecord>;
  selectInvites: Statement<{ threadId: string; now: number }, InviteRecord>;
  deleteInvite: Statement<{ threadId: string; inviteId: string }>;
  useInvite: Statement<{ tokenHash: string; now: number }, InviteRecord>;
  selectInvite: Statement<{ tokenHash: string; now: number }, InviteRecord>;
  selectThreadSummary: Statement<[string], ThreadSummary & Pick<OwnedThreadSummary, 'ownerDid'>>;
  updateThreadHeader: Statement<CommittedHeader>;
  bumpThreadVersion: Statement<{ threadId: string; updatedAt: number }>;
  selectNodes: Statement<[string], NodeColumns>;
  selectNodeThread: Statement<[string], string>;
  selectStoredNode: Statement<[string], StoredNodeText>;
  upsertNode: Statement<NodeRow>;
  insertImportedNode: Statement<ImportedNodeColumns>;
  updateStreamingToolCalls: Statement<{ threadId: string; nodeId: string; toolCalls: string | null }>;
  deleteNode: Statement<{ nodeId: string; threadId: string }>;
  selectStreamedText: Statement<[string], TextPieceRow>;
  insertStreamedText: Statement<Required<StreamedText>>;
  deleteStreamedText: Statement<[string]>;
  selectStreamingThreads: Statement<[], { threadId: string }>;
  selectStreamingNodes: Statement<[], StreamingNodeRow & { rowid: number }>;
  selectAllStreamedText: Statement<[], TextPieceRow>;
  interruptStreamingNode: Statement<{
    nodeId: string;
    content: string;
    reasoning: string | null;
    toolCalls: string | null;
  }>;
  indexTitle: Statement<IndexedText>;
  unindexTitle: Statement<IndexedText>;
  unindexThreadTitle: Statement<[string]>;
  indexNodeText: Statement<[rowid: number | bigint, text: string]>;
  unindexNodeText: Statement<IndexedText>;
  unindexNode: Statement<{ nodeId: string; threadId: string }>;
  unindexThreadNodes: Statement<[string]>;
  searchTitles: Statement<SearchParameters, SearchHit>;
  searchNodes: Statement<SearchParameters, SearchHit>;
  deleteThreadNodes: Statement<[string]>;
  deleteThread: Statement<[string]>;
  retireThreadId: Statement<{ threadId: string; deletedAt: number }>;
  handOverThreads: Statement<{ stagingOwner: string; ownerDid: string }>;
  selectStagedThreads: Statement<[], string>;
}

/**
 * The owner of threads an import is still writing (SqliteStore.importThreads): no DID begins so (a DID begins with
 * `did:`), so no identity lists, searches or opens them. Followed by the import's own id.
 */
export const STAGING_OWNER_PREFIX = 'staged-import:';

/** What a commit reads of its thread: the version it checks, and the title the index holds under the rowid. */
export interface ThreadHead {
  version: number;
  rowid: number;
  title: string;
}

/** A stored node's thread, and its text as the index holds it under its rowid. */
export interface StoredNodeText {
  threadId: string;
  rowid: number;
  content: string;
}

/** A row of a full-text index: the text is cut as the index cuts it (the statements do). */
export interface IndexedText {
  rowid: number | bigint;
  text: string;
}

/** `match` is an FTS5 query: every term as a quoted prefix. */
export interface SearchParameters {
  ownerDid: string;
  match: string;
  limit: number;
}

export function prepareStatements(db: Database): SqliteStatements {
  return {
    // VALUES, not INSERT … SELECT: a statement that may write several rows opens a statement journal, at which FTS5
    // writes its pending terms to disk (see the last migration); the retired ids are read before (isRetired).
    insertThread: db.prepare<NewThreadRow>(`
      INSERT INTO threads (thread_id, owner_did, title, created_at, updated_at, version)
      VALUES (@threadId, @ownerDid, @title, @createdAt, @updatedAt, 0)
      ON CONFLICT (thread_id) DO NOTHING`),
    isRetired: db.prepare<[string], number>('SELECT 1 FROM deleted_threads WHERE thread_id = ?').pluck(),
    selectThread: db.prepare<[string], ThreadRow>(`
      SELECT thread_id AS threadId, owner_did AS ownerDid, title, created_at AS createdAt, updated_at AS updatedAt,
             version, root_node_id AS rootNodeId, head_node_id AS headNodeId
      FROM threads WHERE thread_id = ?`),
    selectThreadHead: db.prepare<[string], ThreadHead>('SELECT version, rowid, title FROM threads WHERE thread_id = ?'),
    // Pages walk the index threads_by_owner_recent backwards; the row value compares (updated_at, thread_id) as the
    // order does, so the page after a cursor starts right at it in the index (EXPLAIN: sqlite-store.test.ts).
    selectFirstThreads: db.prepare<{ ownerDid: string; limit: number }, ThreadSummary>(`
      SELECT ${SUMMARY_COLUMNS} FROM threads WHERE owner_did = @ownerDid
      ORDER BY updated_at DESC, thread_id DESC LIMIT @limit`),
    selectThreadsAfter: db.prepare<ThreadPosition & { ownerDid: string; limit: number }, ThreadSummary>(`
      SELECT ${SUMMARY_COLUMNS} FROM threads WHERE owner_did = @ownerDid AND (updated_at, thread_id) < (@updatedAt, @threadId)
      ORDER BY updated_at DESC, thread_id DESC LIMIT @limit`),
    countThreads: db
      .prepare<{ ownerDid: string; upTo: number }, number>(
        'SELECT COUNT(*) FROM (SELECT 1 FROM threads WHERE owner_did = @ownerDid LIMIT @upTo)',
      )
      .pluck(),
    selectFirstSharedThreads: db.prepare<{ did: string; limit: number }, SharedSummaryRow>(`
      ${SHARED_SUMMARY} ORDER BY threads.updated_at DESC, threads.thread_id DESC LIMIT @limit`),
    selectSharedThreadsAfter: db.prepare<ThreadPosition & { did: string; limit: number }, SharedSummaryRow>(`
      ${SHARED_SUMMARY} AND (threads.updated_at, threads.thread_id) < (@updatedAt, @threadId)
      ORDER BY threads.updated_at DESC, threads.thread_id DESC LIMIT @limit`),
    selectMembers: db.prepare<[string], ThreadMember>(
      'SELECT did, role FROM thread_members WHERE thread_id = ? ORDER BY added_seq',
    ),
    selectMemberRole: db
      .prepare<{ threadId: string; did: string }, MemberRole>(
        'SELECT role FROM thread_members WHERE thread_id = @threadId AND did = @did',
      )
      .pluck(),
    // A member whose role changes keeps its place (added_seq); a new one comes after the thread's others.
    upsertMember: db.prepare<{ threadId: string; did: string; role: MemberRole }>(`
      INSERT INTO thread_members (thread_id, did, role, added_seq)
      SELECT @threadId, @did, @role, (SELECT COALESCE(MAX(added_seq), 0) + 1 FROM thread_members WHERE thread_id = @threadId)
      WHERE EXISTS (SELECT 1 FROM threads WHERE thread_id = @threadId)
      ON CONFLICT (thread_id, did) DO UPDATE SET role = excluded.role`),
    deleteMember: db.prepare<{ threadId: string; did: string }>(
      'DELETE FROM thread_members WHERE thread_id = @threadId AND did = @did',
    ),
    insertShareLink: db.prepare<ShareLinkRecord>(`
      INSERT INTO share_links (link_id, thread_id, owner_did, token_hash, scope, created_at, snapshot)
      SELECT @linkId, @threadId, @ownerDid, @tokenHash, @scope, @createdAt, @snapshot
      WHERE EXISTS (SELECT 1 FROM threads WHERE thread_id = @threadId)`),
    selectShareLinks: db.prepare<[string], ShareLinkSummary>(
      'SELECT link_id AS linkId, scope, created_at AS createdAt FROM share_links WHERE thread_id = ? ORDER BY created_at, link_id',
    ),
    countShareLinks: db.prepare<[string], number>('SELECT COUNT(*) FROM share_links WHERE owner_did = ?').pluck(),
    deleteShareLink: db.prepare<{ threadId: string; linkId: string }>(
      'DELETE FROM share_links WHERE thread_id = @threadId AND link_id = @linkId',
    ),
    selectShareLink: db.prepare<[string], ShareLinkRecord>(
      `SELECT ${SHARE_LINK_COLUMNS} FROM share_links WHERE token_hash = ?`,
    ),
    insertInvite: db.prepare<InviteRecord>(`
      INSERT INTO thread_invites (invite_id, thread_id, token_hash, role, created_at, expires_at, max_uses, uses)
      SELECT @inviteId, @threadId, @tokenHash, @role, @createdAt, @expiresAt, @maxUses, @uses
      WHERE EXISTS (SELECT 1 FROM threads WHERE thread_id = @threadId)`),
    selectInvites: db.prepare<{ threadId: string; now: number }, InviteRecord>(`
      SELECT ${INVITE_COLUMNS} FROM thread_invites
      WHERE thread_id = @threadId AND expires_at > @now AND uses < max_uses ORDER BY created_at, invite_id`),
    deleteInvite: db.prepare<{ threadId: string; inviteId: string }>(
      'DELETE FROM thread_invites WHERE thread_id = @threadId AND invite_id = @inviteId',
    ),
    // One statement: two joins at once never both take an invite's last use.
    useInvite: db.prepare<{ tokenHash: string; now: number }, InviteRecord>(`
      UPDATE thread_invites SET uses = uses + 1
      WHERE token_hash = @tokenHash AND expires_at > @now AND uses < max_uses
      RETURNING ${INVITE_COLUMNS}`),
    selectInvite: db.prepare<{ tokenHash: string; now: number }, InviteRecord>(`
      SELECT ${INVITE_COLUMNS} FROM thread_invites
      WHERE token_hash = @tokenHash AND expires_at > @now AND uses < max_uses`),
    selectThreadSummary: db.prepare<[string], ThreadSummary & Pick<OwnedThreadSummary, 'ownerDid'>>(
      `SELECT owner_did AS ownerDid, ${SUMMARY_COLUMNS} FROM threads WHERE thread_id = ?`,
    ),
    updateThreadHeader: db.prepare<CommittedHeader>(`
      UPDATE threads
      SET root_node_id = @rootNodeId, head_node_id = @headNodeId, version = @version, updated_at = @updatedAt,
          title = COALESCE(@title, title)
      WHERE thread_id = @threadId`),
    bumpThreadVersion: db.prepare<{ threadId: string; updatedAt: number }>(
      'UPDATE threads SET version = version + 1, updated_at = @updatedAt WHERE thread_id = @threadId',
    ),
    selectNodes: db
      .prepare<[string], NodeColumns>(`
        SELECT node_id, parent_id, role, content, reasoning, status, created_at, model, usage, tool_calls, attachments, context, author_did
        FROM nodes WHERE thread_id = ? ORDER BY seq`)
      .raw(),
    selectNodeThread: db.prepare<[string], string>('SELECT thread_id FROM nodes WHERE node_id = ?').pluck(),
    selectStoredNode: db.prepare<[string], StoredNodeText>(
      'SELECT thread_id AS threadId, rowid, content FROM nodes WHERE node_id = ?',
    ),
    // A new node takes the thread's next seq; a node already stored keeps its seq, hence its place among siblings.
    upsertNode: db.prepare<NodeRow>(`
      INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, reasoning, status, created_at, model, usage, tool_calls, attachments, context, author_did)
      VALUES (@nodeId, @threadId, @parentId, (SELECT COALESCE(MAX(seq), 0) + 1 FROM nodes WHERE thread_id = @threadId),
              @role, @content, @reasoning, @status, @createdAt, @model, @usage, @toolCalls, @attachments, @context, @authorDid)
      ON CONFLICT (node_id) DO UPDATE SET
        parent_id = excluded.parent_id, role = excluded.role, content = excluded.content, reasoning = excluded.reasoning, status = excluded.status,
        created_at = excluded.created_at, model = excluded.model, usage = excluded.usage, tool_calls = excluded.tool_calls,
        attachments = excluded.attachments, context = excluded.context, author_did = excluded.author_did`),
    // A node of a thread being imported: new in it, its seq its place in tree order (importThread). Its parameters
    // by position (importedNodeColumns): named ones are looked up in an object each, and an import runs this
    // statement for each of hundreds of thousands of messages.
    insertImportedNode: db.prepare<ImportedNodeColumns>(`
      INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, reasoning, status, created_at, model, usage, tool_calls, attachments, context, author_did)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    updateStreamingToolCalls: db.prepare<{ threadId: string; nodeId: string; toolCalls: string | null }>(`
      UPDATE nodes SET tool_calls = @toolCalls
      WHERE node_id = @nodeId AND thread_id = @threadId AND status = 'streaming'`),
    // Its streamed pieces go with it (ON DELETE CASCADE).
    deleteNode: db.prepare<{ nodeId: string; threadId: string }>(
      'DELETE FROM nodes WHERE node_id = @nodeId AND thread_id = @threadId',
    ),
    // The pieces of the thread's streaming nodes only: those of a node that ended went with its commit.
    selectStreamedText: db.prepare<[string], TextPieceRow>(`
      SELECT streamed_text.node_id AS nodeId, part, text_offset AS offset, text
      FROM streamed_text JOIN nodes ON nodes.node_id = streamed_text.node_id
      WHERE nodes.thread_id = ? AND nodes.status = 'streaming'`),
    insertStreamedText: db.prepare<Required<StreamedText>>(`
      INSERT INTO streamed_text (node_id, part, text_offset, text)
      SELECT @nodeId, @part, @offset, @text FROM nodes
      WHERE node_id = @nodeId AND thread_id = @threadId AND status = 'streaming'
      ON CONFLICT (node_id, part, text_offset) DO UPDATE SET text = excluded.text`),
    deleteStreamedText: db.prepare<[string]>('DELETE FROM streamed_text WHERE node_id = ?'),
    selectStreamingThreads: db.prepare<[], { threadId: string }>(
      "SELECT DISTINCT thread_id AS threadId FROM nodes WHERE status = 'streaming' ORDER BY thread_id",
    ),
    selectStreamingNodes: db.prepare<[], StreamingNodeRow & { rowid: number }>(`
      SELECT node_id AS nodeId, thread_id AS threadId, rowid, content, reasoning, tool_calls AS toolCalls
      FROM nodes WHERE status = 'streaming'`),
    selectAllStreamedText: db.prepare<[], TextPieceRow>(`
      SELECT streamed_text.node_id AS nodeId, part, text_offset AS offset, text
      FROM streamed_text JOIN nodes ON nodes.node_id = streamed_text.node_id
      WHERE nodes.status = 'streaming'`),
    interruptStreamingNode: db.prepare<{
      nodeId: string;
      content: string;
      reasoning: string | null;
      toolCalls: string | null;
    }>(`
      UPDATE nodes SET status = 'interrupted', content = @content, reasoning = @reasoning, tool_calls = @toolCalls
      WHERE node_id = @nodeId`),
    // The full-text indexes (external content: a row is removed with the text it was indexed with). Single rows by
    // VALUES on the paths that write many (commits, imports): FTS5 keeps their terms in memory until the transaction
    // ends (sqlite-migrations.ts, the last migration).
    indexTitle: db.prepare<IndexedText>('INSERT INTO title_text (rowid, title) VALUES (@rowid, @text)'),
    unindexTitle: db.prepare<IndexedText>(
      "INSERT INTO title_text (title_text, rowid, title) VALUES ('delete', @rowid, @text)",
    ),
    unindexThreadTitle: db.prepare<[string]>(
      "INSERT INTO title_text (title_text, rowid, title) SELECT 'delete', rowid, title FROM threads WHERE thread_id = ?",
    ),
    // By position, as insertImportedNode: once per message of an import (named, its object cost 6 % of the store's
    // statements for an import's 100,000 messages).
    indexNodeText: db.prepare<[rowid: number | bigint, text: string]>(
      `INSERT INTO node_text (rowid, content) VALUES (?, substr(?, 1, ${INDEXED_CHARACTERS}))`,
    ),
    unindexNodeText: db.prepare<IndexedText>(
      `INSERT INTO node_text (node_text, rowid, content) VALUES ('delete', @rowid, substr(@text, 1, ${INDEXED_CHARACTERS}))`,
    ),
    unindexNode: db.prepare<{ nodeId: string; threadId: string }>(`
      INSERT INTO node_text (node_text, rowid, content)
      SELECT 'delete', rowid, substr(content, 1, ${INDEXED_CHARACTERS}) FROM nodes WHERE node_id = @nodeId AND thread_id = @threadId`),
    unindexThreadNodes: db.prepare<[string]>(`
      INSERT INTO node_text (node_text, rowid, content)
      SELECT 'delete', rowid, substr(content, 1, ${INDEXED_CHARACTERS}) FROM nodes WHERE thread_id = ?`),
    // The index holds every owner's text: the match comes first, then the owner's rows are kept. An embedded
    // store serves few identities, so a term common in other identities' threads costs little.
    searchTitles: db.prepare<SearchParameters, SearchHit>(`
      SELECT threads.thread_id AS threadId, threads.title, NULL AS nodeId, threads.title AS snippet
      FROM title_text JOIN threads ON threads.rowid = title_text.rowid
      WHERE title_text MATCH @match AND threads.owner_did = @ownerDid
      ORDER BY threads.updated_at DESC, threads.thread_id DESC LIMIT @limit`),
    // The identity's matching messages most recently stored first (rowid order, docs/PROTOCOL.md §25.3): FTS5 walks
    // the match's rowids from the end and the walk stops at the page, so a word in every message costs what a page
    // does (EXPLAIN: sqlite-store.test.ts). A snippet is made for the rows returned only.
    searchNodes: db.prepare<SearchParameters, SearchHit>(`
      SELECT threads.thread_id AS threadId, threads.title, nodes.node_id AS nodeId,
             snippet(node_text, 0, '', '', '…', 24) AS snippet
      FROM node_text JOIN nodes ON nodes.rowid = node_text.rowid JOIN threads ON threads.thread_id = nodes.thread_id
      WHERE node_text MATCH @match AND threads.owner_did = @ownerDid
      ORDER BY node_text.rowid DESC LIMIT @limit`),
    // Their pieces of text go with them (ON DELETE CASCADE); the index forgets them first (unindexThreadNodes).
    deleteThreadNodes: db.prepare<[string]>('DELETE FROM nodes WHERE thread_id = ?'),
    deleteThread: db.prepare<[string]>('DELETE FROM threads WHERE thread_id = ?'),
    retireThreadId: db.prepare<{ threadId: string; deletedAt: number }>(
      'INSERT INTO deleted_threads (thread_id, deleted_at) VALUES (@threadId, @deletedAt) ON CONFLICT DO NOTHING',
    ),
    handOverThreads: db.prepare('UPDATE threads SET owner_did = @ownerDid WHERE owner_did = @stagingOwner'),
    // A range of threads_by_owner_recent: every staging owner sorts between the prefix and the prefix's last
    // character made the next one (':' → ';').
    selectStagedThreads: db
      .prepare<[], string>(
        `SELECT thread_id FROM threads WHERE owner_did > '${STAGING_OWNER_PREFIX}' AND owner_did < '${STAGING_OWNER_PREFIX.slice(0, -1)};'`,
      )
      .pluck(),
  };
}
