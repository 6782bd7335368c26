import type { Attachment, MessageNode } from '@promethea/cpp-protocol';
import type { Pool, PoolClient } from 'pg';
import type { AttachmentRecord } from './conversation-store.js';
import { StoreConflictError } from './store-conflict-error.js';

/** The attachment tables of a `PostgresStore` (migration `attachments`), beside sqlite-attachments.ts. */

const RECORD_COLUMNS = `attachment_id AS id, owner_did AS "ownerDid", thread_id AS "threadId", sha256, name,
  media_type AS "mediaType", size, width, height, created_at AS "createdAt"`;

const SQL = {
  insertBlob: 'INSERT INTO attachment_blobs (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING',
  insert: `
    INSERT INTO attachments (attachment_id, owner_did, thread_id, sha256, name, media_type, size, width, height, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (attachment_id) DO NOTHING`,
  select: `SELECT ${RECORD_COLUMNS} FROM attachments WHERE attachment_id = ANY ($1::text[])`,
  selectBytes: 'SELECT bytes FROM attachment_blobs WHERE sha256 = $1',
  uploadedSince: `
    SELECT COALESCE(SUM(size), 0)::bigint AS bytes FROM attachments WHERE owner_did = $1 AND created_at >= $2`,
  // The row lock of the update keeps two threads from taking one upload at once: the second finds it taken.
  bind: `
    UPDATE attachments SET thread_id = $2
    WHERE attachment_id = $1 AND (thread_id IS NULL OR thread_id = $2)`,
  carry: 'INSERT INTO node_attachments (node_id, attachment_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
  freeUncarried: `
    DELETE FROM attachments WHERE thread_id = $1
    AND NOT EXISTS (SELECT FROM node_attachments WHERE node_attachments.attachment_id = attachments.attachment_id)
    RETURNING sha256`,
  freeThread: 'DELETE FROM attachments WHERE thread_id = $1 RETURNING sha256',
  freePending: 'DELETE FROM attachments WHERE thread_id IS NULL AND created_at < $1 RETURNING sha256',
  freeBlobs: `
    DELETE FROM attachment_blobs WHERE sha256 = ANY ($1::text[])
    AND NOT EXISTS (SELECT FROM attachments WHERE attachments.sha256 = attachment_blobs.sha256)`,
} as const;

type AttachmentRow = Omit<AttachmentRecord, 'width' | 'height'> & { width: number | null; height: number | null };

export async function put(client: PoolClient, record: AttachmentRecord, bytes: Uint8Array): Promise<void> {
  await client.query(SQL.insertBlob, [record.sha256, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]);
  const { id, ownerDid, threadId, sha256, name, mediaType, size, width, height, createdAt } = record;
  const values = [id, ownerDid, threadId, sha256, name, mediaType, size, width ?? null, height ?? null, createdAt];
  const { rowCount } = await client.query(SQL.insert, values);
  if (rowCount === 0) throw StoreConflictError.attachmentExists(id);
}

export async function load(pool: Pool, ids: readonly string[]): Promise<AttachmentRecord[]> {
  const rows = (await pool.query<AttachmentRow>(SQL.select, [ids])).rows;
  const byId = new Map(rows.map((row) => [row.id, fromRow(row)]));
  return ids.flatMap((id) => {
    const record = byId.get(id);
    return record ? [record] : [];
  });
}

export async function bytes(pool: Pool, sha256: string): Promise<Uint8Array | undefined> {
  const bytes = (await pool.query<{ bytes: Buffer }>(SQL.selectBytes, [sha256])).rows[0]?.bytes;
  return bytes && new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export async function uploadedSince(pool: Pool, ownerDid: string, since: number): Promise<number> {
  return (await pool.query<{ bytes: number }>(SQL.uploadedSince, [ownerDid, since])).rows[0]?.bytes ?? 0;
}

/** The node's files become the thread's and are marked as carried by it; throws when one is gone or another's. */
export async function carry(client: PoolClient, threadId: string, node: MessageNode): Promise<void> {
  for (const { id } of node.attachments ?? []) {
    const { rowCount } = await client.query(SQL.bind, [id, threadId]);
    if (rowCount === 0) throw StoreConflictError.attachmentUnavailable(id);
    await client.query(SQL.carry, [node.id, id]);
  }
}

/** After nodes of the thread were deleted: frees the thread's files that no node carries any more. */
export async function freeUncarried(client: PoolClient, threadId: string): Promise<void> {
  await freeBlobs(client, (await client.query<{ sha256: string }>(SQL.freeUncarried, [threadId])).rows);
}

export async function freeThread(client: PoolClient, threadId: string): Promise<void> {
  await freeBlobs(client, (await client.query<{ sha256: string }>(SQL.freeThread, [threadId])).rows);
}

export async function freePending(client: PoolClient, createdBefore: number): Promise<number> {
  const freed = (await client.query<{ sha256: string }>(SQL.freePending, [createdBefore])).rows;
  await freeBlobs(client, freed);
  return freed.length;
}

async function freeBlobs(client: PoolClient, freed: readonly { sha256: string }[]): Promise<void> {
  if (freed.length > 0) await client.query(SQL.freeBlobs, [[...new Set(freed.map(({ sha256 }) => sha256))]]);
}

function fromRow({ width, height, ...row }: AttachmentRow): AttachmentRecord {
  const record: AttachmentRecord = { ...row, mediaType: row.mediaType as Attachment['mediaType'] };
  if (width !== null) record.width = width;
  if (height !== null) record.height = height;
  return record;
}
