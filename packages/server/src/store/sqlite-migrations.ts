import type { Database } from 'better-sqlite3';

/**
 * The schema's history, oldest first; a migration's version is its position (1-based), recorded in SQLite's
 * `user_version`. Append only: a released migration never changes, since databases in the field already ran it.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE threads (
    thread_id TEXT PRIMARY KEY,
    owner_did TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version INTEGER NOT NULL,
    root_node_id TEXT,
    head_node_id TEXT
  ) STRICT;
  CREATE INDEX threads_by_owner ON threads (owner_did, updated_at DESC);

  -- node_id is the primary key on its own: node ids are unique across all threads.
  CREATE TABLE nodes (
    node_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    parent_id TEXT,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('streaming', 'completed', 'interrupted', 'failed')),
    created_at INTEGER NOT NULL,
    model TEXT,
    usage TEXT CHECK (usage IS NULL OR json_valid(usage))
  ) STRICT;
  CREATE UNIQUE INDEX nodes_by_thread ON nodes (thread_id, seq);
  -- Recovery at start looks for these; the partial index stays as small as the number of live generations.
  CREATE INDEX nodes_streaming ON nodes (thread_id) WHERE status = 'streaming';
  `,
  `
  -- The text of a streaming node, saved piece by piece as it streams (see spellStreamedText): a save writes only
  -- what streamed since the last one, where rewriting the node's content would rewrite all of it every time. The
  -- commit that ends the answer writes its whole content and deletes its pieces. A rowid table, so that a batch's
  -- pieces are appended at its end; keyed by node, they would land on as many pages as nodes streaming (a batch
  -- of a thousand pieces took twice as long), and only the small entries of the unique index land there.
  CREATE TABLE streamed_text (
    node_id TEXT NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
    text_offset INTEGER NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (node_id, text_offset)
  ) STRICT;
  `,
  `
  -- Search (ConversationStore.searchThreads): full-text indexes of titles and of the first 100 000 characters of
  -- each message (SEARCHED_TEXT_LENGTH), kept by triggers. External content: the index holds no second copy of
  -- the text, and snippet() reads it from the table. unicode61 without removing diacritics splits and folds words
  -- as searchWords does (letters and digits, lower case), so all three stores match the same words.
  CREATE VIRTUAL TABLE node_text USING fts5 (
    content, content = 'nodes', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 0'
  );
  CREATE TRIGGER node_text_insert AFTER INSERT ON nodes BEGIN
    INSERT INTO node_text (rowid, content) VALUES (new.rowid, substr(new.content, 1, 100000));
  END;
  CREATE TRIGGER node_text_delete AFTER DELETE ON nodes BEGIN
    INSERT INTO node_text (node_text, rowid, content) VALUES ('delete', old.rowid, substr(old.content, 1, 100000));
  END;
  CREATE TRIGGER node_text_update AFTER UPDATE OF content ON nodes WHEN new.content IS NOT old.content BEGIN
    INSERT INTO node_text (node_text, rowid, content) VALUES ('delete', old.rowid, substr(old.content, 1, 100000));
    INSERT INTO node_text (rowid, content) VALUES (new.rowid, substr(new.content, 1, 100000));
  END;
  INSERT INTO node_text (rowid, content) SELECT rowid, substr(content, 1, 100000) FROM nodes;

  CREATE VIRTUAL TABLE title_text USING fts5 (
    title, content = 'threads', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 0'
  );
  CREATE TRIGGER title_text_insert AFTER INSERT ON threads BEGIN
    INSERT INTO title_text (rowid, title) VALUES (new.rowid, new.title);
  END;
  CREATE TRIGGER title_text_delete AFTER DELETE ON threads BEGIN
    INSERT INTO title_text (title_text, rowid, title) VALUES ('delete', old.rowid, old.title);
  END;
  CREATE TRIGGER title_text_update AFTER UPDATE OF title ON threads WHEN new.title IS NOT old.title BEGIN
    INSERT INTO title_text (title_text, rowid, title) VALUES ('delete', old.rowid, old.title);
    INSERT INTO title_text (rowid, title) VALUES (new.rowid, new.title);
  END;
  INSERT INTO title_text (rowid, title) SELECT rowid, title FROM threads;
  `,
  `
  -- Reasoning: a node's reasoning beside its content (NULL: none), and streamed pieces of either part, each spelled
  -- by itself. A UNIQUE constraint cannot change in place: the pieces move to a table of the new shape.
  ALTER TABLE nodes ADD COLUMN reasoning TEXT;
  CREATE TABLE streamed_parts (
    node_id TEXT NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
    part TEXT NOT NULL CHECK (part IN ('content', 'reasoning')),
    text_offset INTEGER NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (node_id, part, text_offset)
  ) STRICT;
  INSERT INTO streamed_parts (node_id, part, text_offset, text) SELECT node_id, 'content', text_offset, text FROM streamed_text ORDER BY rowid;
  DROP TABLE streamed_text;
  ALTER TABLE streamed_parts RENAME TO streamed_text;
  `,
  `
  -- The ids of deleted threads, retired for good: an open of one must not create an empty thread of that id again
  -- (docs/PROTOCOL.md §25.2). Only the id and when; nothing of the thread is kept.
  CREATE TABLE deleted_threads (
    thread_id TEXT PRIMARY KEY,
    deleted_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  `
  -- The thread list in pages (issue 37): the index holds the whole order, (updated_at, thread_id), so that a page,
  -- the first or one after a cursor, is a short range of it. The old index lacked thread_id, and every page sorted
  -- all of the owner's threads to break ties.
  CREATE INDEX threads_by_owner_recent ON threads (owner_did, updated_at, thread_id);
  DROP INDEX threads_by_owner;
  `,
  `
  -- Tool calls: an answer's calls as JSON (NULL: none), written by its commits and, while it streams, by each change.
  ALTER TABLE nodes ADD COLUMN tool_calls TEXT;
  `,
  `
  -- Attachments (docs/PROTOCOL.md §27). A node keeps what it says of its files as JSON (attachments); which
  -- attachments nodes carry is node_attachments, from which a deleted branch or thread frees the files no node
  -- carries any more. The bytes are kept once per SHA-256 (attachment_blobs), however many uploads had them.
  ALTER TABLE nodes ADD COLUMN attachments TEXT CHECK (attachments IS NULL OR json_valid(attachments));
  CREATE TABLE attachment_blobs (
    sha256 TEXT PRIMARY KEY,
    bytes BLOB NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE attachments (
    attachment_id TEXT PRIMARY KEY,
    owner_did TEXT NOT NULL,
    thread_id TEXT,
    sha256 TEXT NOT NULL REFERENCES attachment_blobs (sha256),
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    width INTEGER,
    height INTEGER,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX attachments_by_sha256 ON attachments (sha256);
  CREATE INDEX attachments_by_owner ON attachments (owner_did, created_at);
  CREATE INDEX attachments_by_thread ON attachments (thread_id);
  CREATE INDEX attachments_pending ON attachments (created_at) WHERE thread_id IS NULL;
  CREATE TABLE node_attachments (
    node_id TEXT NOT NULL REFERENCES nodes (node_id) ON DELETE CASCADE,
    attachment_id TEXT NOT NULL REFERENCES attachments (attachment_id),
    PRIMARY KEY (node_id, attachment_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX node_attachments_by_attachment ON node_attachments (attachment_id);
  `,
  `
  -- What an answer's model read of its branch when not all of it, as JSON (NULL: all of it; docs/PROTOCOL.md §28.3).
  ALTER TABLE nodes ADD COLUMN context TEXT;
  `,
  `
  -- Shared threads (issue 34): the identities other than its owner that may read or write a thread. A thread's list
  -- of shared threads is a range of members_by_did; its members go with it.
  CREATE TABLE thread_members (
    thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    did TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('reader', 'writer')),
    added_seq INTEGER NOT NULL,
    PRIMARY KEY (thread_id, did)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX members_by_did ON thread_members (did, thread_id);
  -- The proven DID whose prompt a user node is (NULL: not recorded).
  ALTER TABLE nodes ADD COLUMN author_did TEXT;
  `,
  `
  -- Invites to shared threads (issue 34): a token is a capability, kept only as its SHA-256.
  CREATE TABLE thread_invites (
    invite_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('reader', 'writer')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    max_uses INTEGER NOT NULL,
    uses INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX invites_by_thread ON thread_invites (thread_id, created_at);
  `,
  `
  -- The full-text indexes are written by the store's own statements (SqliteStore), no longer by triggers (issue 37):
  -- a statement that fires a trigger opens a statement journal, and FTS5 writes its pending terms to disk at each
  -- one, so an import of 40,000 messages wrote 40,000 small segments and merged them: 3.5 times the CPU of the same
  -- rows indexed by plain statements, whose terms FTS5 gathers in memory until the transaction's end.
  DROP TRIGGER node_text_insert;
  DROP TRIGGER node_text_delete;
  DROP TRIGGER node_text_update;
  DROP TRIGGER title_text_insert;
  DROP TRIGGER title_text_delete;
  DROP TRIGGER title_text_update;
  `,
  `
  -- Read-only share links (issue 34): a token is a capability, kept only as its SHA-256; the snapshot is JSON.
  CREATE TABLE share_links (
    link_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
    owner_did TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL CHECK (scope IN ('branch', 'tree')),
    created_at INTEGER NOT NULL,
    snapshot TEXT NOT NULL
  ) STRICT;
  CREATE INDEX share_links_by_thread ON share_links (thread_id, created_at);
  CREATE INDEX share_links_by_owner ON share_links (owner_did);
  `,
  `
  -- Attachment bytes in files beside the database, named by their SHA-256 (<database>.files/ab/abcdef…; see
  -- SqliteAttachments): a 10 MiB blob written into 4 KiB pages held the event loop 300-600 ms. in_file = 1: the
  -- bytes are that file and the column is empty; 0: the bytes are the column, as an earlier server wrote them or as a
  -- database without a folder (:memory:) keeps them.
  ALTER TABLE attachment_blobs ADD COLUMN in_file INTEGER NOT NULL DEFAULT 0 CHECK (in_file IN (0, 1));
  `,
  `
  -- The full-text indexes' segments are merged by the store in bounded steps between turns of the event loop
  -- (SqliteIndexMerger), no longer by FTS5 inside the commit of whichever write made a level full (20-65 ms of an
  -- import's transactions; issue 37). crisismerge: the segments a level may reach before a write merges them anyway.
  -- FTS5 keeps these settings in the index's own %_config table: they hold for every connection to the file.
  INSERT INTO node_text (node_text, rank) VALUES ('automerge', 0);
  INSERT INTO node_text (node_text, rank) VALUES ('crisismerge', 64);
  INSERT INTO title_text (title_text, rank) VALUES ('automerge', 0);
  INSERT INTO title_text (title_text, rank) VALUES ('crisismerge', 64);
  `,
];

/**
 * Brings the schema up to date in one immediate transaction, so that two processes opening the same new file do
 * not both migrate it. Refuses a database written by a newer version of the server.
 */
export function migrate(db: Database): void {
  db.transaction(() => {
    const current = Number(db.pragma('user_version', { simple: true }));
    if (current > SQLITE_MIGRATIONS.length) {
      throw new Error(
        `database schema version ${current} is newer than this server supports (${SQLITE_MIGRATIONS.length})`,
      );
    }
    SQLITE_MIGRATIONS.slice(current).forEach((sql, index) => {
      db.exec(sql);
      db.pragma(`user_version = ${current + index + 1}`);
    });
  }).immediate();
}
