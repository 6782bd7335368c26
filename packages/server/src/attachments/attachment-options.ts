import { ATTACHMENTS_PER_PROMPT_MAX } from '@promethea/cpp-protocol';

/** What uploads are held to (docs/PROTOCOL.md §27.6); each refusal has its own documented answer. */
export interface AttachmentLimits {
  /** The largest file, in bytes: HTTP 413 `ATTACHMENT_TOO_LARGE` beyond it. */
  maxBytes: number;
  /** Bytes one identity may upload in 24 hours (counting the uploads still kept): HTTP 429 `RATE_LIMITED` beyond. */
  bytesPerDay: number;
  /** Pixels of an image, width × height, as its header says: HTTP 422 `UNSUPPORTED_ATTACHMENT` beyond (a decompression bomb). */
  maxImagePixels: number;
  /** How long an upload no committed prompt carries is kept, in milliseconds. */
  unusedTtlMs: number;
  /** How long a ticket lasts, in milliseconds. */
  ticketTtlMs: number;
}

export const DEFAULT_ATTACHMENT_LIMITS: AttachmentLimits = {
  maxBytes: 20 * 1024 * 1024,
  bytesPerDay: 500 * 1024 * 1024,
  maxImagePixels: 50_000_000,
  unusedTtlMs: 24 * 60 * 60 * 1000,
  ticketTtlMs: 60 * 60 * 1000,
};

export interface AttachmentOptions extends Partial<AttachmentLimits> {
  /**
   * The key tickets are signed with (at least 32 characters). Every server of a cluster must be given the same one,
   * so that a ticket one of them issued is taken by all; absent, a random key of this process, which suits a server
   * on its own.
   */
  ticketSecret?: string;
}

/** The most files one prompt may carry; the frames' schema holds prompts to it. */
export const MAX_ATTACHMENTS_PER_PROMPT = ATTACHMENTS_PER_PROMPT_MAX;
