/** A thread's summary as lists show it; the node count is one range of the index on nodes (thread_id, seq). */
const SUMMARY_COLUMNS = `thread_id AS "threadId", title, created_at AS "createdAt", updated_at AS "updatedAt", version,
  (SELECT COUNT(*)::integer FROM nodes WHERE nodes.thread_id = threads.thread_id) AS "nodeCount"`;

/** An invite's columns as an `InviteRecord` (bigint times as numbers). */
const INVITE_COLUMNS = `invite_id AS "inviteId", thread_id AS "threadId", token_hash AS "tokenHash", role,
  created_at::float8 AS "createdAt", expires_at::float8 AS "expiresAt", max_uses AS "maxUses", uses`;

/** The summary of each thread shared with the DID `did` (a parameter), read through its membership. */
function sharedSummary(did: string): string {
  return `SELECT threads.thread_id AS "threadId", threads.title, threads.created_at AS "createdAt",
    threads.updated_at AS "updatedAt", threads.version, thread_members.role,
    (SELECT COUNT(*)::integer FROM nodes WHERE nodes.thread_id = threads.thread_id) AS "nodeCount"
    FROM thread_members JOIN threads ON threads.thread_id = thread_members.thread_id
    WHERE thread_members.did = ${did}`;
}

/**
 * The SQL the PostgreSQL store runs, beside sqlite-statements.ts. Column aliases are quoted so that rows come back
 * with the field names of `ThreadRow`, `NodeRow` and `ThreadSummary`.
 */
/** Search hits (`hits`) with their headlines, made for the rows returned only: it reads the whole text again. */
const SEARCH_HEADLINES = `
    SELECT thread_id AS "threadId", title, node_id AS "nodeId",
           ts_headline('simple', left(content, 100000), to_tsquery('simple', $2), 'StartSel="", StopSel="", MaxWords=24, MinWords=8, ShortWord=0') AS snippet
    FROM hits ORDER BY stored DESC`;

export const POSTGRES_STATEMENTS = {
  insertThread: `
    INSERT INTO threads (thread_id, owner_did, title, created_at, updated_at, version)
    SELECT $1, $2, $3, $4, $5, 0
    WHERE NOT EXISTS (SELECT FROM deleted_threads WHERE thread_id = $1)
    ON CONFLICT (thread_id) DO NOTHING`,
  // An import's batch in two statements, each a round trip whatever the batch's size: the threads (at version 1,
  // each with its root and head; a taken or retired id is left out, which the store reads as a conflict), then
  // their nodes in tree order, seq 1, 2, … per thread (a node id in use is a unique violation).
  importThreads: `
    INSERT INTO threads (thread_id, owner_did, title, created_at, updated_at, version, root_node_id, head_node_id)
    SELECT thread_id, owner_did, title, created_at, updated_at, 1, root, head
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])
      AS imported (thread_id, owner_did, title, created_at, updated_at, root, head)
    WHERE NOT EXISTS (SELECT FROM deleted_threads WHERE deleted_threads.thread_id = imported.thread_id)
    ON CONFLICT (thread_id) DO NOTHING
    RETURNING thread_id AS "threadId"`,
  importNodes: `
    INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, status, created_at, model, usage, reasoning, tool_calls, attachments)
    SELECT node_id, thread_id, parent_id, seq, role, content, status, created_at, model, usage::jsonb, reasoning, tool_calls::jsonb,
           attachments::jsonb
    FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::text[], $8::bigint[],
                $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
      AS imported (node_id, thread_id, parent_id, seq, role, content, status, created_at, model, usage, reasoning, tool_calls, attachments)`,
  selectThread: `
    SELECT thread_id AS "threadId", owner_did AS "ownerDid", title, created_at AS "createdAt", updated_at AS "updatedAt",
           version, root_node_id AS "rootNodeId", head_node_id AS "headNodeId"
    FROM threads WHERE thread_id = $1`,
  // The row lock makes every other commit to the thread wait until this transaction ends.
  lockThreadVersion: 'SELECT version FROM threads WHERE thread_id = $1 FOR UPDATE',
  // Pages walk the index threads_by_owner (owner_did, updated_at DESC, thread_id DESC); the row comparison starts
  // the page after a cursor right at it in the index (EXPLAIN: postgres-store.test.ts).
  selectFirstThreads: `
    SELECT ${SUMMARY_COLUMNS} FROM threads WHERE owner_did = $1
    ORDER BY updated_at DESC, thread_id DESC LIMIT $2`,
  selectThreadsAfter: `
    SELECT ${SUMMARY_COLUMNS} FROM threads WHERE owner_did = $1 AND (updated_at, thread_id) < ($3, $4)
    ORDER BY updated_at DESC, thread_id DESC LIMIT $2`,
  selectFirstSharedThreads: `${sharedSummary('$1')} ORDER BY threads.updated_at DESC, threads.thread_id DESC LIMIT $2`,
  selectSharedThreadsAfter: `${sharedSummary('$1')} AND (threads.updated_at, threads.thread_id) < ($3, $4)
    ORDER BY threads.updated_at DESC, threads.thread_id DESC LIMIT $2`,
  selectMembers: 'SELECT did, role FROM thread_members WHERE thread_id = $1 ORDER BY added_seq',
  selectMemberRole: 'SELECT role FROM thread_members WHERE thread_id = $1 AND did = $2',
  // A member whose role changes keeps its place (added_seq).
  upsertMember: `
    INSERT INTO thread_members (thread_id, did, role)
    SELECT $1, $2, $3 WHERE EXISTS (SELECT FROM threads WHERE thread_id = $1)
    ON CONFLICT (thread_id, did) DO UPDATE SET role = excluded.role`,
  deleteMember: 'DELETE FROM thread_members WHERE thread_id = $1 AND did = $2',
  insertShareLink: `
    INSERT INTO share_links (link_id, thread_id, owner_did, token_hash, scope, created_at, snapshot)
    SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT FROM threads WHERE thread_id = $2)`,
  selectShareLinks: `SELECT link_id AS "linkId", scope, created_at::float8 AS "createdAt" FROM share_links
    WHERE thread_id = $1 ORDER BY created_at, link_id`,
  countShareLinks: 'SELECT COUNT(*)::integer AS count FROM share_links WHERE owner_did = $1',
  deleteShareLink: 'DELETE FROM share_links WHERE thread_id = $1 AND link_id = $2',
  selectShareLink: `SELECT link_id AS "linkId", thread_id AS "threadId", owner_did AS "ownerDid",
    token_hash AS "tokenHash", scope, created_at::float8 AS "createdAt", snapshot FROM share_links WHERE token_hash = $1`,
  insertInvite: `
    INSERT INTO thread_invites (invite_id, thread_id, token_hash, role, created_at, expires_at, max_uses, uses)
    SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS (SELECT FROM threads WHERE thread_id = $2)`,
  selectInvites: `SELECT ${INVITE_COLUMNS} FROM thread_invites
    WHERE thread_id = $1 AND expires_at > $2 AND uses < max_uses ORDER BY created_at, invite_id`,
  deleteInvite: 'DELETE FROM thread_invites WHERE thread_id = $1 AND invite_id = $2',
  // One statement: the row's lock keeps two joins at once from both taking an invite's last use.
  useInvite: `UPDATE thread_invites SET uses = uses + 1
    WHERE token_hash = $1 AND expires_at > $2 AND uses < max_uses RETURNING ${INVITE_COLUMNS}`,
  selectInvite: `SELECT ${INVITE_COLUMNS} FROM thread_invites
    WHERE token_hash = $1 AND expires_at > $2 AND uses < max_uses`,
  countThreads: 'SELECT COUNT(*)::integer AS count FROM (SELECT 1 FROM threads WHERE owner_did = $1 LIMIT $2) AS owned',
  selectThreadSummary: `SELECT owner_did AS "ownerDid", ${SUMMARY_COLUMNS} FROM threads WHERE thread_id = $1`,
  updateThreadHeader: `
    UPDATE threads
    SET root_node_id = $2, head_node_id = $3, version = $4, updated_at = $5, title = COALESCE($6, title)
    WHERE thread_id = $1`,
  // Read as arrays (NodeColumns), in its order.
  selectNodes: `
    SELECT node_id, parent_id, role, content, reasoning, status, created_at, model, usage::text, tool_calls::text, attachments::text, context::text, author_did
    FROM nodes WHERE thread_id = $1 ORDER BY seq`,
  selectNodeThread: 'SELECT thread_id AS "threadId" FROM nodes WHERE node_id = $1',
  // A new node takes the thread's next seq; a node already stored keeps its seq, hence its place among siblings.
  // The WHERE leaves a node of another thread alone (no row affected): the store reads that as a conflict. Being
  // part of the upsert, the check also holds against a concurrent transaction inserting the same id.
  upsertNode: `
    INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, status, created_at, model, usage, reasoning, tool_calls, attachments, context, author_did)
    VALUES ($1, $2, $3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM nodes WHERE thread_id = $2), $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb, $12::jsonb, $13::jsonb, $14)
    ON CONFLICT (node_id) DO UPDATE SET
      parent_id = excluded.parent_id, role = excluded.role, content = excluded.content, reasoning = excluded.reasoning, status = excluded.status,
      created_at = excluded.created_at, model = excluded.model, usage = excluded.usage, tool_calls = excluded.tool_calls, attachments = excluded.attachments,
      context = excluded.context, author_did = excluded.author_did
    WHERE nodes.thread_id = excluded.thread_id`,
  updateStreamingToolCalls: `
    UPDATE nodes SET tool_calls = $3::jsonb WHERE thread_id = $1 AND node_id = $2 AND status = 'streaming'`,
  // Their streamed pieces go with them (ON DELETE CASCADE).
  deleteNodes: 'DELETE FROM nodes WHERE thread_id = $1 AND node_id = ANY ($2::text[])',
  // The pieces of the thread's streaming nodes only: those of a node that ended went with its commit.
  selectStreamedText: `
    SELECT streamed_text.node_id AS "nodeId", part, text_offset AS "offset", text
    FROM streamed_text JOIN nodes ON nodes.node_id = streamed_text.node_id
    WHERE nodes.thread_id = $1 AND nodes.status = 'streaming'`,
  // A whole batch in one statement, so in one transaction and one round trip. Entries come as five parallel
  // arrays; the last entry for a node, part and offset wins, as it would one entry after another. The nodes are locked
  // FOR SHARE, in node id order, until the pieces are in: a commit that ends one of them (and deletes its pieces)
  // waits, or, having come first, leaves it no longer streaming, and its pieces are not written. Pieces go in in
  // node id order too, so two batches writing the same pieces wait for each other instead of deadlocking.
  insertStreamedText: `
    WITH batch AS (
      SELECT DISTINCT ON (thread_id, node_id, part, text_offset) thread_id, node_id, part, text_offset, text
      FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::text[]) WITH ORDINALITY AS entry (thread_id, node_id, text_offset, text, part, position)
      ORDER BY thread_id, node_id, part, text_offset, position DESC
    ), locked AS MATERIALIZED (
      SELECT nodes.node_id, nodes.thread_id FROM nodes
      WHERE nodes.status = 'streaming' AND (nodes.node_id, nodes.thread_id) IN (SELECT node_id, thread_id FROM batch)
      ORDER BY nodes.node_id
      FOR SHARE OF nodes
    )
    INSERT INTO streamed_text (node_id, part, text_offset, text)
    SELECT batch.node_id, batch.part, batch.text_offset, batch.text
    FROM batch JOIN locked ON locked.node_id = batch.node_id AND locked.thread_id = batch.thread_id
    ORDER BY batch.node_id, batch.part, batch.text_offset
    ON CONFLICT (node_id, part, text_offset) DO UPDATE SET text = excluded.text`,
  deleteStreamedText: 'DELETE FROM streamed_text WHERE node_id = ANY ($1::text[])',
  // Threads are locked before their nodes, in id order: the same order as a commit's, so recovery and commits
  // cannot deadlock.
  lockStreamingThreads: `
    SELECT thread_id AS "threadId" FROM threads
    WHERE thread_id IN (SELECT thread_id FROM nodes WHERE status = 'streaming')
    ORDER BY thread_id FOR UPDATE`,
  selectStreamingThreads: `SELECT DISTINCT thread_id AS "threadId" FROM nodes WHERE status = 'streaming' ORDER BY thread_id`,
  selectStreamingNodes: `
    SELECT node_id AS "nodeId", thread_id AS "threadId", content, reasoning, tool_calls::text AS "toolCalls" FROM nodes
    WHERE status = 'streaming' AND thread_id = ANY ($1::text[])`,
  selectStreamedTextOf: `
    SELECT node_id AS "nodeId", part, text_offset AS "offset", text FROM streamed_text WHERE node_id = ANY ($1::text[])`,
  interruptNodes: `
    UPDATE nodes
    SET status = 'interrupted', content = recovered.content, reasoning = recovered.reasoning,
        tool_calls = recovered.tool_calls::jsonb
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS recovered (node_id, content, reasoning, tool_calls)
    WHERE nodes.node_id = recovered.node_id`,
  // $2 is a tsquery of every term as a prefix (term:* & …).
  searchTitles: `
    SELECT thread_id AS "threadId", title, NULL AS "nodeId", title AS snippet
    FROM threads
    WHERE owner_did = $1 AND title_search @@ to_tsquery('simple', $2)
    ORDER BY updated_at DESC, thread_id DESC LIMIT $3`,
  newestStored: 'SELECT COALESCE(MAX(stored), 0)::bigint AS "newest" FROM nodes',
  // The identity's messages that match, most recently stored first, in two parts around the stored position $4: the
  // newer ones by a walk of nodes_by_stored from its end that stops at the page ($4 leaves it at most
  // SEARCH_WINDOW rows), the older ones from nodes_search, sorted. "+ 0" keeps the planner off nodes_by_stored
  // there: it cannot know how few messages a word matches, and walked the whole index for a rare one (0.6 s at
  // 200,000 messages); OFFSET 0 keeps the owner's check a lookup per match rather than a scan of every thread.
  searchNewerNodes: `
    WITH hits AS (
      SELECT threads.thread_id, threads.title, nodes.node_id, nodes.content, nodes.stored
      FROM nodes JOIN threads ON threads.thread_id = nodes.thread_id
      WHERE nodes.stored > $4 AND threads.owner_did = $1 AND nodes.search @@ to_tsquery('simple', $2)
      ORDER BY nodes.stored DESC LIMIT $3
    )
    ${SEARCH_HEADLINES}`,
  searchOlderNodes: `
    WITH hits AS (
      SELECT owned.thread_id, owned.title, nodes.node_id, nodes.content, nodes.stored
      FROM nodes CROSS JOIN LATERAL (
        SELECT thread_id, title FROM threads WHERE threads.thread_id = nodes.thread_id AND owner_did = $1 OFFSET 0
      ) AS owned
      WHERE nodes.stored + 0 <= $4 AND nodes.search @@ to_tsquery('simple', $2)
      ORDER BY nodes.stored + 0 DESC LIMIT $3
    )
    ${SEARCH_HEADLINES}`,
  /** Deletes the thread and retires its id in one statement; counts the thread deleted. */
  deleteThread: `
    WITH deleted AS (DELETE FROM threads WHERE thread_id = $1 RETURNING thread_id)
    INSERT INTO deleted_threads (thread_id, deleted_at) SELECT thread_id, $2 FROM deleted
    ON CONFLICT (thread_id) DO NOTHING`,
  bumpThreadVersions: `
    UPDATE threads SET version = version + 1, updated_at = $2
    WHERE thread_id = ANY ($1::text[])`,
} as const;
