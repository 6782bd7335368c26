import type { Attachment, MessageNode } from '@promethea/cpp-protocol';
import type { Database, Statement } from 'better-sqlite3';
import type { AttachmentFileWriter, AttachmentFiles } from './attachment-files.js';
import type { AttachmentRecord, AttachmentUpload } from './conversation-store.js';
import { gatheredUpload } from './gathered-upload.js';
import { StoreConflictError } from './store-conflict-error.js';

type AttachmentRow = Omit<AttachmentRecord, 'width' | 'height'> & { width: number | null; height: number | null };

/**
 * How old a file no row names, or a temporary file, must be before the sweep removes it (by its last write): a younger
 * one may be an upload between its file and its row, in this process or another on the same database.
 */
export const ORPHAN_FILE_AGE_MS = 60 * 60 * 1000;

/** How many times an upload writes its file again when another connection's sweep removed it before its row. */
const PUT_ATTEMPTS = 3;

const RECORD_COLUMNS = `attachment_id AS id, owner_did AS ownerDid, thread_id AS threadId, sha256, name,
  media_type AS mediaType, size, width, height, created_at AS createdAt`;

/**
 * The attachment tables of a `SqliteStore` (migrations 7 and 11). `carry` and the frees run inside the store's
 * transaction, so a commit binds its files, and a deletion frees them, with the change itself or not at all.
 *
 * With a folder (`files`), bytes are files named by their SHA-256, and a row of `attachment_blobs` with `in_file = 1`
 * says that the file is kept: a file is written before its row and removed after its row is gone, each removal in a
 * write transaction that finds no row naming the file, so that no connection can add one in between. A crash between
 * leaves a file no row names, which `sweep` removes. Without a folder (`:memory:`), and for the rows of a database
 * written before migration 11, the bytes are the row's column.
 */
export class SqliteAttachments {
  /** The files of blobs freed by the current transaction: `removeFreedFiles` removes those still freed after it. */
  private readonly freedFiles = new Set<string>();
  private lastSweep = Number.NEGATIVE_INFINITY;
  private readonly statements: {
    insertBlob: Statement<{ sha256: string; bytes: Uint8Array; inFile: 0 | 1 }>;
    selectBlob: Statement<[string], { inFile: 0 | 1; bytes: Buffer }>;
    blobInFile: Statement<[string], 0 | 1>;
    hasFile: Statement<[string], number>;
    insert: Statement<AttachmentRow>;
    select: Statement<[string], AttachmentRow>;
    uploadedSince: Statement<{ ownerDid: string; since: number }, number>;
    bind: Statement<{ attachmentId: string; threadId: string }>;
    carry: Statement<{ nodeId: string; attachmentId: string }>;
    freeUncarried: Statement<[string], string>;
    freeThread: Statement<[string], string>;
    release: Statement<[string]>;
    freePending: Statement<[number], string>;
    freeBlob: Statement<{ sha256: string }, { inFile: 0 | 1 }>;
  };

  constructor(
    private readonly db: Database,
    private readonly files: AttachmentFiles | undefined,
  ) {
    this.statements = {
      insertBlob: db.prepare(
        'INSERT INTO attachment_blobs (sha256, bytes, in_file) VALUES (@sha256, @bytes, @inFile) ON CONFLICT (sha256) DO NOTHING',
      ),
      selectBlob: db.prepare('SELECT in_file AS inFile, bytes FROM attachment_blobs WHERE sha256 = ?'),
      blobInFile: db.prepare<[string], 0 | 1>('SELECT in_file FROM attachment_blobs WHERE sha256 = ?').pluck(),
      hasFile: db.prepare<[string], number>('SELECT 1 FROM attachment_blobs WHERE sha256 = ? AND in_file = 1').pluck(),
      insert: db.prepare(`
        INSERT INTO attachments (attachment_id, owner_did, thread_id, sha256, name, media_type, size, width, height, created_at)
        VALUES (@id, @ownerDid, @threadId, @sha256, @name, @mediaType, @size, @width, @height, @createdAt)
        ON CONFLICT (attachment_id) DO NOTHING`),
      select: db.prepare(`SELECT ${RECORD_COLUMNS} FROM attachments WHERE attachment_id = ?`),
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
      release: db.prepare<[string]>('UPDATE attachments SET thread_id = NULL WHERE thread_id = ?'),
      freePending: db
        .prepare<[number], string>(
          'DELETE FROM attachments WHERE thread_id IS NULL AND created_at < ? RETURNING sha256',
        )
        .pluck(),
      freeBlob: db.prepare(`
        DELETE FROM attachment_blobs WHERE sha256 = @sha256
        AND NOT EXISTS (SELECT 1 FROM attachments WHERE attachments.sha256 = @sha256)
        RETURNING in_file AS inFile`),
    };
  }

  /**
   * An upload: with a folder, its file is written as its bytes arrive (asynchronous I/O, outside any transaction,
   * `AttachmentFileWriter`) and kept under its name when it is finished, before its rows; without one, its bytes are
   * gathered for their row (`size`, when known, makes room for them once).
   */
  async open(size?: number): Promise<AttachmentUpload> {
    const { files } = this;
    if (!files) return gatheredUpload(size, async (record, bytes) => this.putInRow(record, bytes));
    const file = files.begin();
    return {
      write: (bytes) => file.write(bytes),
      finish: (record) => this.putInFile(record, file),
      close: () => file.close(),
    };
  }

  private putInRow(record: AttachmentRecord, bytes: Uint8Array): void {
    this.db
      .transaction(() => {
        this.statements.insertBlob.run({ sha256: record.sha256, bytes, inFile: 0 });
        this.insert(record);
      })
      .immediate();
  }

  /**
   * The upload's file under its name, then, in one write transaction, its rows, if the file is still there; another
   * connection's sweep may have removed it in between (a file of the same bytes no row named), and then this upload's
   * file takes its place. Bytes an earlier server kept in their row stay there.
   */
  private async putInFile(record: AttachmentRecord, file: AttachmentFileWriter): Promise<void> {
    const files = this.files!;
    for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt += 1) {
      if (this.statements.blobInFile.get(record.sha256) !== 0) await file.keep(record.sha256);
      const kept = this.db
        .transaction(() => {
          if (this.statements.blobInFile.get(record.sha256) !== 0) {
            if (!files.hasSync(record.sha256)) return false;
            this.statements.insertBlob.run({ sha256: record.sha256, bytes: EMPTY, inFile: 1 });
          }
          this.insert(record);
          return true;
        })
        .immediate();
      if (kept) return;
    }
    throw new Error(`the file of ${record.sha256} was removed each time it was written`);
  }

  private insert(record: AttachmentRecord): void {
    const row = { ...record, width: record.width ?? null, height: record.height ?? null };
    if (this.statements.insert.run(row).changes === 0) throw StoreConflictError.attachmentExists(record.id);
  }

  load(ids: readonly string[]): AttachmentRecord[] {
    return ids.flatMap((id) => {
      const row = this.statements.select.get(id);
      return row ? [fromRow(row)] : [];
    });
  }

  async bytes(sha256: string): Promise<Uint8Array | undefined> {
    const blob = this.statements.selectBlob.get(sha256);
    if (!blob) return undefined;
    if (blob.inFile === 0) return new Uint8Array(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength);
    return this.files?.read(sha256);
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

  /** The thread's files become uploads again, that no prompt carries (an import given up: PROTOCOL.md §25.5). */
  release(threadId: string): void {
    this.statements.release.run(threadId);
  }

  freePending(createdBefore: number): number {
    const freed = this.statements.freePending.all(createdBefore);
    this.freeBlobs(freed);
    return freed.length;
  }

  /**
   * After the transaction that freed blobs, whether it committed or not: removes their files, each in a write
   * transaction that finds no row naming it (a rolled back free left its row; an upload since added one).
   */
  removeFreedFiles(): void {
    const { files } = this;
    // Inside a transaction still open (an import's, across its awaits) a removal could outlive its rollback: the
    // files wait for the next call, or the sweep.
    if (!files || this.freedFiles.size === 0 || this.db.inTransaction) return;
    const freed = [...this.freedFiles];
    this.freedFiles.clear();
    this.db
      .transaction(() => {
        for (const sha256 of freed) if (this.statements.hasFile.get(sha256) === undefined) files.removeSync(sha256);
      })
      .immediate();
  }

  /**
   * Removes, at most once per `ORPHAN_FILE_AGE_MS`, the files no row names and the temporary files, written at least
   * that long ago (`now`, ms, the clock of file times): what a crash between a file and its row, or between a row's
   * deletion and its file's, left behind. Reads the folder asynchronously; each removal is its own short transaction.
   */
  async sweep(now: number): Promise<void> {
    const { files } = this;
    if (!files || now - this.lastSweep < ORPHAN_FILE_AGE_MS || this.db.inTransaction) return;
    this.lastSweep = now;
    const before = now - ORPHAN_FILE_AGE_MS;
    const unnamed = (sha256: string) => this.statements.hasFile.get(sha256) === undefined;
    for await (const sha256 of files.names()) {
      if (!unnamed(sha256)) continue;
      const modified = await files.modifiedAt(sha256);
      if (modified === undefined || modified >= before || this.db.inTransaction) continue;
      this.db
        .transaction(() => {
          if (unnamed(sha256)) files.removeSync(sha256);
        })
        .immediate();
    }
    await files.removeTempFilesBefore(before);
  }

  private freeBlobs(sha256s: readonly string[]): void {
    for (const sha256 of new Set(sha256s))
      if (this.statements.freeBlob.get({ sha256 })?.inFile === 1) this.freedFiles.add(sha256);
  }
}

const EMPTY = new Uint8Array(0);

function fromRow({ width, height, ...row }: AttachmentRow): AttachmentRecord {
  const record: AttachmentRecord = { ...row, mediaType: row.mediaType as Attachment['mediaType'] };
  if (width !== null) record.width = width;
  if (height !== null) record.height = height;
  return record;
}
