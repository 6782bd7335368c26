import type { AttachmentRecord, AttachmentUpload } from './conversation-store.js';

/**
 * An upload for a store that keeps bytes whole (in its heap, in a database row). With its `size` known, the pieces
 * are copied as they come into room made for all of them at the first (not when the upload only declares it), so each
 * is let go at once and nothing is left to join at the end; bytes beyond that size, or of an upload whose size is not
 * known, are held as they come and joined once when it is finished. `keep` stores them, bytes of their own.
 */
export function gatheredUpload(
  size: number | undefined,
  keep: (record: AttachmentRecord, bytes: Uint8Array) => Promise<void>,
): AttachmentUpload {
  let room: Uint8Array | undefined;
  let filled = 0;
  let pieces: Uint8Array[] = [];
  return {
    async write(bytes) {
      if (pieces.length === 0 && size !== undefined && filled + bytes.length <= size) {
        room ??= unfilled(size);
        room.set(bytes, filled);
        filled += bytes.length;
      } else {
        pieces.push(bytes);
      }
    },
    async finish(record) {
      const start = room ? [room.subarray(0, filled)] : [];
      const whole = room && pieces.length === 0 && filled === size ? room : join([...start, ...pieces]);
      await keep(record, whole);
    },
    async close() {
      room = undefined;
      pieces = [];
    },
  };
}

function join(pieces: readonly Uint8Array[]): Uint8Array {
  const bytes = unfilled(pieces.reduce((length, piece) => length + piece.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    bytes.set(piece, offset);
    offset += piece.length;
  }
  return bytes;
}

/**
 * Not zero-filled first (every byte is written next), and not a slice of Node's shared pool, as the store keeps it: a
 * plain `Uint8Array` (a `Buffer`'s `slice` would share its bytes where the store's copies must not).
 */
function unfilled(length: number): Uint8Array {
  const { buffer } = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer, 0, length);
}
