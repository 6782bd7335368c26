/**
 * The SQL the PostgreSQL store runs, beside sqlite-statements.ts. Column aliases are quoted so that rows come back
 * with the field names of `ThreadRow`, `NodeRow` and `ThreadSummary`.
 */
export const POSTGRES_STATEMENTS = {
  insertThread: `
    INSERT INTO threads (thread_id, owner_did, title, created_at, updated_at, version)
    VALUES ($1, $2, $3, $4, $5, 0)
    ON CONFLICT (thread_id) DO NOTHING`,
  selectThread: `
    SELECT thread_id AS "threadId", owner_did AS "ownerDid", title, created_at AS "createdAt", updated_at AS "updatedAt",
           version, root_node_id AS "rootNodeId", head_node_id AS "headNodeId"
    FROM threads WHERE thread_id = $1`,
  // The row lock makes every other commit to the thread wait until this transaction ends.
  lockThreadVersion: 'SELECT version FROM threads WHERE thread_id = $1 FOR UPDATE',
  selectThreadSummaries: `
    SELECT thread_id AS "threadId", title, created_at AS "createdAt", updated_at AS "updatedAt", version,
           (SELECT COUNT(*)::integer FROM nodes WHERE nodes.thread_id = threads.thread_id) AS "nodeCount"
    FROM threads WHERE owner_did = $1
    ORDER BY updated_at DESC, thread_id DESC`,
  updateThreadHeader: `
    UPDATE threads
    SET root_node_id = $2, head_node_id = $3, version = $4, updated_at = $5, title = COALESCE($6, title)
    WHERE thread_id = $1`,
  selectNodes: `
    SELECT node_id AS "nodeId", thread_id AS "threadId", parent_id AS "parentId", role, content, status,
           created_at AS "createdAt", model, usage::text AS usage
    FROM nodes WHERE thread_id = $1 ORDER BY seq`,
  selectNodeThread: 'SELECT thread_id AS "threadId" FROM nodes WHERE node_id = $1',
  // A new node takes the thread's next seq; a node already stored keeps its seq, hence its place among siblings.
  // The WHERE leaves a node of another thread alone (no row affected): the store reads that as a conflict. Being
  // part of the upsert, the check also holds against a concurrent transaction inserting the same id.
  upsertNode: `
    INSERT INTO nodes (node_id, thread_id, parent_id, seq, role, content, status, created_at, model, usage)
    VALUES ($1, $2, $3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM nodes WHERE thread_id = $2), $4, $5, $6, $7, $8, $9::jsonb)
    ON CONFLICT (node_id) DO UPDATE SET
      parent_id = excluded.parent_id, role = excluded.role, content = excluded.content, status = excluded.status,
      created_at = excluded.created_at, model = excluded.model, usage = excluded.usage
    WHERE nodes.thread_id = excluded.thread_id`,
  // A whole batch in one statement, so in one transaction and one round trip. Entries come as three parallel
  // arrays; the last entry for a node wins, as it would one entry after another. The rows are locked in node id
  // order, so two batches naming the same nodes in different orders queue up instead of deadlocking.
  updateStreamingContents: `
    WITH batch AS (
      SELECT DISTINCT ON (thread_id, node_id) thread_id, node_id, content
      FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS entry (thread_id, node_id, content, position)
      ORDER BY thread_id, node_id, position DESC
    ), locked AS MATERIALIZED (
      SELECT nodes.node_id, batch.content FROM nodes
      JOIN batch ON batch.node_id = nodes.node_id AND batch.thread_id = nodes.thread_id
      WHERE nodes.status = 'streaming'
      ORDER BY nodes.node_id
      FOR UPDATE OF nodes
    )
    UPDATE nodes SET content = locked.content FROM locked WHERE nodes.node_id = locked.node_id`,
  // Threads are locked before their nodes, in id order: the same order as a commit's, so recovery and commits
  // cannot deadlock.
  lockStreamingThreads: `
    SELECT thread_id AS "threadId" FROM threads
    WHERE thread_id IN (SELECT thread_id FROM nodes WHERE status = 'streaming')
    ORDER BY thread_id FOR UPDATE`,
  interruptStreamingNodes: `
    UPDATE nodes SET status = 'interrupted'
    WHERE status = 'streaming' AND thread_id = ANY ($1::text[])
    RETURNING thread_id AS "threadId"`,
  bumpThreadVersions: `
    UPDATE threads SET version = version + 1, updated_at = $2
    WHERE thread_id = ANY ($1::text[])`,
} as const;
