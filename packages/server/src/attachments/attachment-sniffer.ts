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
 * Sniffs the type from the bytes (the client's name and Content-Type are never trusted): an image or a PDF by its
 * signature (`file-type`), else UTF-8 text without NUL. An image's width and height come from its header, and an
 * image of more than `maxImagePixels` pixels is refused before anything decodes it.
 */
export async function sniffFile(bytes: Uint8Array, maxImagePixels: number): Promise<SniffedFile> {
  if (bytes.length === 0) throw unsupported('the file is empty');
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
  if (isUtf8Text(bytes)) return { mediaType: 'text/plain' };
  const what = detected ? `a ${detected.mime} file` : 'a binary file of no type accepted';
  throw unsupported(`the file is ${what}`);
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
 * Valid UTF-8, and no NUL (which no text file holds, and PostgreSQL text could not keep once extracted): checked in
 * place, without decoding the file into a string as large as it.
 */
function isUtf8Text(bytes: Uint8Array): boolean {
  return !bytes.includes(0) && isUtf8(bytes);
}

function unsupported(why: string): CPPError {
  return new CPPError(ErrorCode.UNSUPPORTED_ATTACHMENT, `${why}; accepted: ${ACCEPTED_TYPES_TEXT}`);
}
