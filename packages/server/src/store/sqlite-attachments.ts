import type { Attachment, MessageNode } from '@promethea/cpp-protocol';
import type { Database, Statement } from 'better-sqlite3';
import type { AttachmentRecord } from './conversation-store.js';
import { StoreConflictError } from './store-conflict-error.js';

type AttachmentRow = Omit<AttachmentRecord, 'width' | 'height'> & { width: number | null; height: number | null };

const RECORD_COLUMNS = `attachment_id AS id, owner_did AS ownerDid, thread_id AS threadId, sha256, name,
  media_type AS mediaType, size, width, height, created_at AS createdAt`;

/**
 * The attachment tables of a `SqliteStore` (migration 7): every method runs inside the store's transaction, so a
 * commit binds its files, and a deletion frees them, with the change itself or not at all.
 */
export class SqliteAttachments {
  private readonly statements: {
    insertBlob: Statement<{ sha256: string; bytes: Uint8Array }>;
    insert: Statement<AttachmentRow>;
    select: Statement<[string], AttachmentRow>;
    selectBytes: Statement<[string], Buffer>;
    uploadedSince: Statement<{ ownerDid: string; since: number }, number>;
    bind: Statement<{ attachmentId: string; threadId: string }>;
    carry: Statement<{ nodeId: string; attachmentId: string }>;
    freeUncarried: Statement<[string], string>;
    freeThread: Statement<[string], string>;
    freePending: Statement<[number], string>;
    freeBlob: Statement<{ sha256: string }>;
  };

  constructor(db: Database) {
    this.statements = {
      insertBlob: db.prepare(
        'INSERT INTO attachment_blobs (sha256, bytes) VALUES (@sha256, @bytes) ON CONFLICT (sha256) DO NOTHING',
      ),
      insert: db.prepare(`
        INSERT INTO attachments (attachment_id, owner_did, thread_id, sha256, name, media_type, size, width, height, created_at)
        VALUES (@id, @ownerDid, @threadId, @sha256, @name, @mediaType, @size, @width, @height, @createdAt)
        ON CONFLICT (attachment_id) DO NOTHING`),
      select: db.prepare(`SELECT ${RECORD_COLUMNS} FROM attachments WHERE attachment_id = ?`),
      selectBytes: db.prepare<[string], Buffer>('SELECT bytes FROM attachment_blobs WHERE sha256 = ?').pluck(),
      uploadedSince: db
        .prepare<{ ownerDid: string; since: number }, number>(
          'SELECT COALESCE(SUM(size), 0) FROM attachments WHERE owner_did = @ownerDid AND created_at >= @since',
        )
        .pluck(),
      bind: db.prepare(`
        UPDATE attachments SET thread_id = @threadId
        WHERE attachment_id = @attachmentId AND (thread_id IS NULL OR thread_id = @threadId)`),
      carry: db.prepare(
        'INSERT INTO node_attachments (node_id, attachment_id) VALUES (@nodeId, @attachmentId) ON CONFLICT DO NOTHING',
      ),
      freeUncarried: db
        .prepare<[string], string>(`
          DELETE FROM attachments WHERE thread_id = ?
          AND NOT EXISTS (SELECT 1 FROM node_attachments WHERE node_attachments.attachment_id = attachments.attachment_id)
          RETURNING sha256`)
        .pluck(),
      freeThread: db.prepare<[string], string>('DELETE FROM attachments WHERE thread_id = ? RETURNING sha256').pluck(),
      freePending: db
        .prepare<[number], string>(
          'DELETE FROM attachments WHERE thread_id IS NULL AND created_at < ? RETURNING sha256',
        )
        .pluck(),
      freeBlob: db.prepare(`
        DELETE FROM attachment_blobs WHERE sha256 = @sha256
        AND NOT EXISTS (SELECT 1 FROM attachments WHERE attachments.sha256 = @sha256)`),
    };
  }

  put(record: AttachmentRecord, bytes: Uint8Array): void {
    this.statements.insertBlob.run({ sha256: record.sha256, bytes });
    const row = { ...record, width: record.width ?? null, height: record.height ?? null };
    if (this.statements.insert.run(row).changes === 0) throw StoreConflictError.attachmentExists(record.id);
  }

  load(ids: readonly string[]): AttachmentRecord[] {
    return ids.flatMap((id) => {
      const row = this.statements.select.get(id);
      return row ? [fromRow(row)] : [];
    });
  }

  bytes(sha256: string): Uint8Array | undefined {
    const bytes = this.statements.selectBytes.get(sha256);
    return bytes && new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  uploadedSince(ownerDid: string, since: number): number {
    return this.statements.uploadedSince.get({ ownerDid, since }) ?? 0;
  }

  /** The node's files become the thread's and are marked as carried by it; throws when one is gone or another's. */
  carry(threadId: string, node: MessageNode): void {
    for (const { id: attachmentId } of node.attachments ?? []) {
      if (this.statements.bind.run({ attachmentId, threadId }).changes === 0)
        throw StoreConflictError.attachmentUnavailable(attachmentId);
      this.statements.carry.run({ nodeId: node.id, attachmentId });
    }
  }

  /** After nodes of the thread were deleted: frees the thread's files that no node carries any more. */
  freeUncarried(threadId: string): void {
    this.freeBlobs(this.statements.freeUncarried.all(threadId));
  }

  /** Frees every file of a thread whose nodes are deleted. */
  freeThread(threadId: string): void {
    this.freeBlobs(this.statements.freeThread.all(threadId));
  }

  freePending(createdBefore: number): number {
    const freed = this.statements.freePending.all(createdBefore);
    this.freeBlobs(freed);
    return freed.length;
  }

  private freeBlobs(sha256s: readonly string[]): void {
    for (const sha256 of new Set(sha256s)) this.statements.freeBlob.run({ sha256 });
  }
}

function fromRow({ width, height, ...row }: AttachmentRow): AttachmentRecord {
  const record: AttachmentRecord = { ...row, mediaType: row.mediaType as Attachment['mediaType'] };
  if (width !== null) record.width = width;
  if (height !== null) record.height = height;
  return record;
}
