import type { Pool, PoolClient } from 'pg';
import { checkSchemaName, DEFAULT_SCHEMA } from './postgres-connection.js';
import { inTransaction } from './postgres-transaction.js';

export interface Migration {
  /** Shown in progress messages and kept in the migrations table. */
  name: string;
  sql: string;
}

/**
 * The schema's history, oldest first; a migration's version is its position (1-based), recorded in the table
 * `schema_migrations`. Append only: a released migration never changes, since databases in the field already ran it.
 * Tables and semantics are those of SQLite's (sqlite-migrations.ts). Ids are `COLLATE "C"` so that ordering by
 * them is by code point, as in SQLite and in JavaScript, whatever the database's locale.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    name: 'threads and nodes',
    sql: `
    CREATE TABLE threads (
      thread_id text COLLATE "C" PRIMARY KEY,
      owner_did text NOT NULL,
      title text NOT NULL,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL,
      version integer NOT NULL,
      root_node_id text COLLATE "C",
      head_node_id text COLLATE "C"
    );
    CREATE INDEX threads_by_owner ON threads (owner_did, updated_at DESC, thread_id DESC);

    -- node_id is the primary key on its own: node ids are unique across all threads.
    CREATE TABLE nodes (
      node_id text COLLATE "C" PRIMARY KEY,
      thread_id text COLLATE "C" NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      parent_id text COLLATE "C",
      seq integer NOT NULL,
      role text NOT NULL CHECK (role IN ('user', 'assistant')),
      content text NOT NULL,
      status text NOT NULL CHECK (status IN ('streaming', 'completed', 'interrupted', 'failed')),
      created_at bigint NOT NULL,
      model text,
      usage jsonb
    );
    CREATE UNIQUE INDEX nodes_by_thread ON nodes (thread_id, seq);
    -- Recovery at start looks for these; the partial index stays as small as the number of live generations.
    CREATE INDEX nodes_streaming ON nodes (thread_id) WHERE status = 'streaming';
    `,
  },
  {
    name: 'streamed text in pieces',
    sql: `
    -- The text of a streaming node, saved piece by piece as it streams (see spellStreamedText): a save writes only
    -- what streamed since the last one, where rewriting the node's content would rewrite (and TOAST) all of it
    -- every time. The commit that ends the answer writes its whole content and deletes its pieces.
    CREATE TABLE streamed_text (
      node_id text COLLATE "C" NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
      text_offset integer NOT NULL,
      text text NOT NULL,
      PRIMARY KEY (node_id, text_offset)
    );
    `,
  },
  {
    name: 'search',
    sql: `
    -- Search (ConversationStore.searchThreads) over titles and the first 100 000 characters of each message
    -- (SEARCHED_TEXT_LENGTH, which also keeps every tsvector far below its 1 MB limit). The 'simple' configuration
    -- lower-cases words and neither stems nor drops any, as SQLite's unicode61 and searchWords do.
    ALTER TABLE nodes ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', left(content, 100000))) STORED;
    CREATE INDEX nodes_search ON nodes USING gin (search);
    ALTER TABLE threads ADD COLUMN title_search tsvector GENERATED ALWAYS AS (to_tsvector('simple', title)) STORED;
    CREATE INDEX threads_title_search ON threads USING gin (title_search);
    `,
  },
  {
    name: 'reasoning',
    sql: `
    -- A node's reasoning beside its content (NULL: none), and streamed pieces of either part, each spelled by itself.
    ALTER TABLE nodes ADD COLUMN reasoning text;
    ALTER TABLE streamed_text ADD COLUMN part text NOT NULL DEFAULT 'content' CHECK (part IN ('content', 'reasoning'));
    ALTER TABLE streamed_text DROP CONSTRAINT streamed_text_pkey, ADD PRIMARY KEY (node_id, part, text_offset);
    `,
  },
  {
    name: 'retired thread ids',
    sql: `
    -- The ids of deleted threads, retired for good: an open of one must not create an empty thread of that id again
    -- (docs/PROTOCOL.md §25.2). Only the id and when; nothing of the thread is kept.
    CREATE TABLE deleted_threads (
      thread_id text PRIMARY KEY,
      deleted_at bigint NOT NULL
    );
    `,
  },
  {
    name: 'tool-calls',
    sql: `
    -- An answer's tool calls (NULL: none), written by its commits and, while it streams, by each change of a call.
    ALTER TABLE nodes ADD COLUMN tool_calls jsonb;
    `,
  },
  {
    name: 'attachments',
    sql: `
    -- Attachments (docs/PROTOCOL.md §27), as in SQLite: a node's JSON of its files, which attachments nodes carry
    -- (node_attachments, from which a deleted branch or thread frees the files no node carries), and the bytes once
    -- per SHA-256. bytea is TOASTed, so a blob's bytes are read only when served or sent to a model.
    ALTER TABLE nodes ADD COLUMN attachments jsonb;
    CREATE TABLE attachment_blobs (
      sha256 text PRIMARY KEY,
      bytes bytea NOT NULL
    );
    CREATE TABLE attachments (
      attachment_id text PRIMARY KEY,
      owner_did text NOT NULL,
      thread_id text,
      sha256 text NOT NULL REFERENCES attachment_blobs (sha256),
      name text NOT NULL,
      media_type text NOT NULL,
      size integer NOT NULL,
      width integer,
      height integer,
      created_at bigint NOT NULL
    );
    CREATE INDEX attachments_by_sha256 ON attachments (sha256);
    CREATE INDEX attachments_by_owner ON attachments (owner_did, created_at);
    CREATE INDEX attachments_by_thread ON attachments (thread_id);
    CREATE INDEX attachments_pending ON attachments (created_at) WHERE thread_id IS NULL;
    CREATE TABLE node_attachments (
      node_id text NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
      attachment_id text NOT NULL REFERENCES attachments (attachment_id) ON DELETE CASCADE,
      PRIMARY KEY (node_id, attachment_id)
    );
    CREATE INDEX node_attachments_by_attachment ON node_attachments (attachment_id);
    `,
  },
  {
    name: 'answer-context',
    sql: `
    -- What an answer's model read of its branch when not all of it (NULL: all of it; docs/PROTOCOL.md §28.3).
    ALTER TABLE nodes ADD COLUMN context jsonb;
    `,
  },
  {
    name: 'shared threads',
    sql: `
    -- Shared threads (issue 34): the identities other than its owner that may read or write a thread. A thread's
    -- list of shared threads is a range of members_by_did; its members go with it.
    CREATE TABLE thread_members (
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      did text NOT NULL,
      role text NOT NULL CHECK (role IN ('reader', 'writer')),
      added_seq bigint GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (thread_id, did)
    );
    CREATE INDEX members_by_did ON thread_members (did, thread_id);
    -- The proven DID whose prompt a user node is (NULL: not recorded).
    ALTER TABLE nodes ADD COLUMN author_did text;
    `,
  },
  {
    name: 'invites',
    sql: `
    -- Invites to shared threads (issue 34): a token is a capability, kept only as its SHA-256.
    CREATE TABLE thread_invites (
      invite_id text PRIMARY KEY,
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      role text NOT NULL CHECK (role IN ('reader', 'writer')),
      created_at bigint NOT NULL,
      expires_at bigint NOT NULL,
      max_uses integer NOT NULL,
      uses integer NOT NULL
    );
    CREATE INDEX invites_by_thread ON thread_invites (thread_id, created_at);
    `,
  },
  {
    name: 'search by recency',
    sql: `
    -- A search lists the matching messages most recently stored first (docs/PROTOCOL.md §25.3, issue 37): the order
    -- in which the server first stored each, as SQLite's rowid gives it, kept when a message's text changes. For a
    -- word in most messages the planner walks this index from its end and stops at the page; for a rarer one it
    -- takes the matches from nodes_search and sorts those.
    ALTER TABLE nodes ADD COLUMN stored bigint GENERATED ALWAYS AS IDENTITY;
    CREATE INDEX nodes_by_stored ON nodes (stored);
    `,
  },
  {
    name: 'share links',
    sql: `
    -- Read-only share links (issue 34): a token is a capability, kept only as its SHA-256; the snapshot is JSON.
    CREATE TABLE share_links (
      link_id text PRIMARY KEY,
      thread_id text NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
      owner_did text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      scope text NOT NULL CHECK (scope IN ('branch', 'tree')),
      created_at bigint NOT NULL,
      snapshot text NOT NULL
    );
    CREATE INDEX share_links_by_thread ON share_links (thread_id, created_at);
    CREATE INDEX share_links_by_owner ON share_links (owner_did);
    `,
  },
];

export interface MigrateOptions {
  /** Default `public`. */
  schema?: string;
  /** Told what is being done, one line per step, e.g. for a progress log at start. */
  onProgress?: (message: string) => void;
}

export interface MigrationResult {
  /** The version the schema is at now. */
  version: number;
  /** How many migrations this call applied: 0 when another server had done them. */
  applied: number;
}

/**
 * Brings the schema up to date, each migration in its own transaction. Every transaction first takes an advisory
 * lock for the schema, so that several servers starting at once wait for each other and each migration runs
 * exactly once; a server that waited finds the work done. Refuses a schema written by a newer server. Works on any
 * pool, as it sets the schema itself: for the `cpp-server migrate` command as for `PostgresStore.open`.
 */
export async function migrate(pool: Pool, options: MigrateOptions = {}): Promise<MigrationResult> {
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const report = options.onProgress ?? (() => {});
  let version = await inTransaction(pool, (client) => lockSchema(client, schema));
  let applied = 0;
  while (version < POSTGRES_MIGRATIONS.length) {
    const reached = await inTransaction(pool, (client) => applyNext(client, schema, report));
    if (reached.applied) applied += 1;
    version = reached.version;
  }
  report(`PostgreSQL schema ${schema}: up to date at version ${version}`);
  return { version, applied };
}

/** Applies the migration that follows the version reached, unless another server just did. */
async function applyNext(
  client: PoolClient,
  schema: string,
  report: (message: string) => void,
): Promise<{ version: number; applied: boolean }> {
  const version = await lockSchema(client, schema);
  const next = POSTGRES_MIGRATIONS[version];
  if (!next) return { version, applied: false };
  report(
    `PostgreSQL schema ${schema}: applying migration ${version + 1} of ${POSTGRES_MIGRATIONS.length} (${next.name})`,
  );
  await client.query(next.sql);
  await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version + 1, next.name]);
  return { version: version + 1, applied: true };
}

/**
 * Takes the schema's migration lock for the rest of the transaction, creates the schema and its migrations table
 * if missing, and returns the version reached. Existence is checked before creating, so that a server without the
 * right to create anything can still open a schema that is up to date.
 */
async function lockSchema(client: PoolClient, schema: string): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`cpp-server migrations ${schema}`]);
  await client.query(`SET LOCAL search_path TO ${schema}`);
  const { rows } = await client.query<{ schemaExists: boolean; tableExists: boolean }>(
    `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1) AS "schemaExists",
            to_regclass('schema_migrations') IS NOT NULL AS "tableExists"`,
    [schema],
  );
  const { schemaExists, tableExists } = rows[0]!;
  if (!schemaExists) await client.query(`CREATE SCHEMA ${schema}`);
  if (!tableExists) {
    await client.query(`
      CREATE TABLE schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  }
  const current = await client.query<{ version: number }>(
    'SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations',
  );
  const version = current.rows[0]!.version;
  if (version > POSTGRES_MIGRATIONS.length) {
    throw new Error(
      `PostgreSQL schema ${schema} is at version ${version}, newer than this server supports (${POSTGRES_MIGRATIONS.length})`,
    );
  }
  return version;
}
