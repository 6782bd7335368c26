import { isUtf8 } from 'node:buffer';
import { ATTACHMENT_MEDIA_TYPES, type AttachmentMediaType, CPPError, ErrorCode } from '@promethea/cpp-protocol';

/** What the bytes of an upload are, decided from them alone: the type, and an image's size in pixels. */
export interface SniffedFile {
  mediaType: AttachmentMediaType;
  width?: number;
  height?: number;
}

/** What a refusal names as taken, so that the person knows what to send instead. */
export const ACCEPTED_TYPES_TEXT =
  'PNG, JPEG, WebP or GIF images, PDF, or UTF-8 text (plain text, Markdown, CSV, JSON, code)';

const BINARY_TYPES = new Set<string>(ATTACHMENT_MEDIA_TYPES.filter((type) => type !== 'text/plain'));

/**
 * What `file-type` reads of a file to find the signatures it knows at its start (its `reasonableDetectionSizeInBytes`).
 * A PNG's detection and a JPEG's size read further (chunks and segments), but neither can begin as text can.
 */
const HEAD_BYTES = 4100;

/**
 * Sniffs the type of a file whose bytes arrive in pieces, as they arrive (the client's name and Content-Type are
 * never trusted): an image or a PDF by its signature (`file-type`), else UTF-8 text without NUL. An image's width and
 * height come from its header, and an image of more than `maxImagePixels` pixels is refused before anything decodes
 * it.
 *
 * The text check reads each piece once, in place. Of a file whose first `HEAD_BYTES` could be text, only those are
 * kept: a signature found there is all `file-type` reads of a text-like start, so a 10 MiB text file costs its pieces
 * nothing more. Any other file is kept whole (its pieces, joined once at the end), as an image's size and a PNG's
 * detection may read anywhere in it.
 */
export class FileSniffer {
  private readonly text = new TextCheck();
  private pieces: Uint8Array[] = [];
  private size = 0;
  /** Whether the pieces are the whole file so far: until the head has come, and then for a file that is not text. */
  private whole = true;

  update(piece: Uint8Array): void {
    this.text.update(piece);
    if (this.whole) this.pieces.push(piece);
    const headDone = this.size < HEAD_BYTES && this.size + piece.length >= HEAD_BYTES;
    this.size += piece.length;
    if (headDone && this.text.valid) this.whole = false;
  }

  async result(maxImagePixels: number): Promise<SniffedFile> {
    if (this.size === 0) throw unsupported('the file is empty');
    const bytes = join(this.pieces);
    this.pieces = [];
    // Loaded with the first upload, as unpdf is with the first PDF: a server that is never sent a file never reads
    // them (test/package/root-import.test.ts holds the root import to its module budget).
    const { fileTypeFromBuffer } = await import('file-type');
    const detected = await fileTypeFromBuffer(bytes);
    if (detected && BINARY_TYPES.has(detected.mime)) {
      const mediaType = detected.mime as AttachmentMediaType;
      if (!mediaType.startsWith('image/')) return { mediaType };
      const { imageSize } = await import('image-size');
      return { mediaType, ...imageDimensions(() => imageSize(bytes), maxImagePixels) };
    }
    if (this.text.valid && this.text.complete) return { mediaType: 'text/plain' };
    const what = detected ? `a ${detected.mime} file` : 'a binary file of no type accepted';
    throw unsupported(`the file is ${what}`);
  }
}

/** Sniffs the type of a file whose bytes are all at hand (`FileSniffer`). */
export function sniffFile(bytes: Uint8Array, maxImagePixels: number): Promise<SniffedFile> {
  const sniffer = new FileSniffer();
  sniffer.update(bytes);
  return sniffer.result(maxImagePixels);
}

function imageDimensions(
  readSize: () => { width?: number; height?: number },
  maxImagePixels: number,
): { width: number; height: number } {
  let size: { width?: number; height?: number };
  try {
    size = readSize();
  } catch {
    throw unsupported('the image is damaged: its size cannot be read');
  }
  const { width, height } = size;
  if (!width || !height) throw unsupported('the image is damaged: its size cannot be read');
  if (width * height > maxImagePixels) {
    throw unsupported(`the image is ${width}×${height} pixels; the limit is ${maxImagePixels} pixels`);
  }
  return { width, height };
}

/**
 * Whether bytes arriving in pieces are valid UTF-8 with no NUL (which no text file holds, and PostgreSQL text could
 * not keep once extracted): each piece is checked in place (`isUtf8`), never decoded into a string; a character a
 * piece cuts off is held (3 bytes at most) and checked whole with the start of the next.
 */
export class TextCheck {
  /** False once a byte was found that no UTF-8 text holds there. */
  valid = true;
  private cut: Uint8Array = EMPTY;

  /** Whether no character is cut off at the end: valid text ends where its last character does. */
  get complete(): boolean {
    return this.cut.length === 0;
  }

  update(piece: Uint8Array): void {
    if (!this.valid) return;
    if (piece.includes(0)) return void (this.valid = false);
    let start = 0;
    if (this.cut.length > 0) {
      start = Math.min(sequenceLength(this.cut[0]!) - this.cut.length, piece.length);
      const character = new Uint8Array(this.cut.length + start);
      character.set(this.cut);
      character.set(piece.subarray(0, start), this.cut.length);
      this.cut = EMPTY;
      if (character.length < sequenceLength(character[0]!)) return void (this.cut = character);
      if (!isUtf8(character)) return void (this.valid = false);
    }
    const end = wholeCharactersEnd(piece, start);
    if (!isUtf8(piece.subarray(start, end))) return void (this.valid = false);
    this.cut = piece.slice(end);
  }
}

const EMPTY = new Uint8Array(0);

/** How many bytes a character beginning with `lead` has (a byte no character begins with counts as one). */
function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  return lead >= 0xc0 ? 2 : 1;
}

/** Where the piece's last whole character ends: before a character its end cuts off, else at its end. */
function wholeCharactersEnd(piece: Uint8Array, start: number): number {
  for (let index = piece.length - 1; index >= Math.max(start, piece.length - 3); index -= 1) {
    const byte = piece[index]!;
    if ((byte & 0xc0) === 0x80) continue;
    return index + sequenceLength(byte) > piece.length ? index : piece.length;
  }
  return piece.length;
}

function join(pieces: readonly Uint8Array[]): Uint8Array {
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
}

function unsupported(why: string): CPPError {
  return new CPPError(ErrorCode.UNSUPPORTED_ATTACHMENT, `${why}; accepted: ${ACCEPTED_TYPES_TEXT}`);
}
