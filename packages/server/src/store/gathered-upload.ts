import type { AttachmentRecord, AttachmentUpload } from './conversation-store.js';

/**
 * An upload for a store that keeps bytes whole (in its heap, in a database row): the pieces are held as they come
 * and joined once, into bytes of their own, when the upload is finished; `keep` stores them.
 */
export function gatheredUpload(keep: (record: AttachmentRecord, bytes: Uint8Array) => Promise<void>): AttachmentUpload {
  let pieces: Uint8Array[] = [];
  return {
    async write(bytes) {
      pieces.push(bytes);
    },
    async finish(record) {
      await keep(record, join(pieces));
    },
    async close() {
      pieces = [];
    },
  };
}

function join(pieces: readonly Uint8Array[]): Uint8Array {
  // Not zero-filled first (every byte is written next), and not a slice of Node's shared pool: the store keeps it.
  const bytes = Buffer.allocUnsafeSlow(pieces.reduce((length, piece) => length + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    bytes.set(piece, offset);
    offset += piece.length;
  }
  return bytes;
}
