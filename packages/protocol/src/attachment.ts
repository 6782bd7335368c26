import { z } from 'zod';
import { ATTACHMENT_MEDIA_TYPES, ATTACHMENT_NAME_MAX_LENGTH, ATTACHMENTS_PER_PROMPT_MAX } from './attachment-types.js';
import { ATTACHMENT_ID_PATTERN } from './ids.js';

/**
 * Files a prompt carries (docs/PROTOCOL.md §27). The bytes travel over HTTP, beside the WebSocket; frames and nodes
 * carry only what is written here: an id, and metadata the server measured from the bytes.
 */

export const AttachmentIdSchema = z
  .string()
  .regex(ATTACHMENT_ID_PATTERN, 'expected an attachment id: att_ followed by 1-100 of [A-Za-z0-9_-]');

export const AttachmentMediaTypeSchema = z.enum(ATTACHMENT_MEDIA_TYPES);

/**
 * A file name as it is shown, never a path: no slash or backslash, no control character, not `.` or `..`, and no
 * lone surrogate (UTF-8 cannot hold one). Servers derive it from the name the client gave (`attachmentName`).
 */
export const AttachmentNameSchema = z
  .string()
  .min(1)
  .max(ATTACHMENT_NAME_MAX_LENGTH)
  .regex(/^[^/\\\u0000-\u001f\u007f]*$/, 'a file name may hold no slash, backslash or control character')
  .regex(/^(?!\.{1,2}$)/, 'a file name may not be . or ..')
  .regex(/^\P{Surrogate}*$/u, 'a file name may not contain a lone surrogate (half of a UTF-16 pair)');

/** What a node says of a file it carries: metadata, never the bytes. */
export const AttachmentSchema = z.object({
  id: AttachmentIdSchema,
  name: AttachmentNameSchema,
  mediaType: AttachmentMediaTypeSchema,
  /** Bytes. */
  size: z.number().int().nonnegative(),
  /** The SHA-256 of the bytes, 64 lower-case hexadecimal digits. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Images only: pixels. */
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});
export type Attachment = z.infer<typeof AttachmentSchema>;

/** The attachments a prompt names, each once. */
export const AttachmentIdsSchema = z
  .array(AttachmentIdSchema)
  .min(1)
  .max(ATTACHMENTS_PER_PROMPT_MAX)
  .refine((ids) => new Set(ids).size === ids.length, 'an attachment may be named only once in a prompt');

/**
 * The name kept for a file the client named `given`: its last path segment, control characters and the characters
 * no store keeps removed, cut to the longest name; `file` when nothing is left.
 */
export function attachmentName(given: string): string {
  const last = given.split(/[/\\]/).at(-1) ?? '';
  // Control characters and lone surrogates go: neither is shown, and UTF-8 cannot hold the second.
  const clean = last.replace(/[\u0000-\u001f\u007f]|\p{Surrogate}/gu, '').trim();
  const cut = cutToLength(clean, ATTACHMENT_NAME_MAX_LENGTH);
  return cut === '' || cut === '.' || cut === '..' ? 'file' : cut;
}

/** Cut to at most `max` code units without splitting a surrogate pair. */
function cutToLength(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /\p{Surrogate}/u.test(text[max - 1] ?? '') && /\p{Surrogate}/u.test(text[max] ?? '') ? max - 1 : max;
  return text.slice(0, end);
}
