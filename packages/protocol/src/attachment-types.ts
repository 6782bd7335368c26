/**
 * What a server takes as attachments (docs/PROTOCOL.md §27), apart from the schemas: a page that shows files reads
 * these without loading the validator.
 */

/**
 * The types a server accepts, each decided from the bytes: raster images a vision model reads, PDF, and UTF-8 text
 * (plain text, Markdown, CSV, JSON, source code: all `text/plain`, told apart by their names only).
 */
export const ATTACHMENT_MEDIA_TYPES = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/gif',
  'application/pdf',
  'text/plain',
] as const;

export type AttachmentMediaType = (typeof ATTACHMENT_MEDIA_TYPES)[number];

/** The raster image types, which a server may show inline and a vision model reads. */
export function isImageType(mediaType: AttachmentMediaType): boolean {
  return mediaType.startsWith('image/');
}

/** The most files one prompt may carry. */
export const ATTACHMENTS_PER_PROMPT_MAX = 10;

/** The longest file name kept, in UTF-16 code units. */
export const ATTACHMENT_NAME_MAX_LENGTH = 255;
