import type { Attachment } from '@promethea/cpp-protocol';

/** What every message costs beside its text: its role and the provider's separators (OpenAI's chat format: 3–4). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

const NOT_ASCII = /[^\u0000-\u007f]/;
const ASCII_RUNS = /[\u0000-\u007f]+/g;

/**
 * Tokens in `text`, estimated where the model's own tokenizer is not at hand (docs/PROTOCOL.md §28.2): a quarter of
 * a token per ASCII code unit (English prose and code run at about four characters a token in the BPE vocabularies
 * of OpenAI, Anthropic and Llama), one token for every other code unit (CJK, emoji and accented text run at about one
 * a character or worse). It errs on the side of more, so that a fitted context does not overflow upstream.
 */
export function estimateTokens(text: string): number {
  // V8's regular expressions scan in native code: ten times faster than a loop over charCodeAt on long ASCII text.
  const other = NOT_ASCII.test(text) ? text.replace(ASCII_RUNS, '').length : 0;
  return Math.ceil((text.length - other) / 4) + other;
}

/** What an image costs a vision model at most: Anthropic's (width × height) / 750 for its largest image size. */
export const IMAGE_TOKENS_MAX = 1_600;
/** A PDF is given as the text of its first 100 pages at most (docs/PROTOCOL.md §27.7): 800 tokens a page at most. */
export const PDF_TOKENS_MAX = 80_000;

/**
 * The estimated tokens of a file, from what a node says of it (its bytes are not read to count): an image, by its
 * pixels as Anthropic documents them, at most IMAGE_TOKENS_MAX (OpenAI's tiles cost about as much); a text file, a
 * token per 3 bytes (UTF-8 prose runs at 4 bytes a token or more); a PDF, whose bytes are mostly compressed streams
 * and pictures, a token per 8 bytes, at most PDF_TOKENS_MAX; and its name.
 */
export function estimateAttachmentTokens(file: Omit<Attachment, 'id'>): number {
  const name = estimateTokens(file.name);
  if (file.mediaType.startsWith('image/')) {
    const pixels = (file.width ?? 0) * (file.height ?? 0);
    return name + (pixels > 0 ? Math.min(IMAGE_TOKENS_MAX, Math.ceil(pixels / 750)) : IMAGE_TOKENS_MAX);
  }
  if (file.mediaType === 'application/pdf') return name + Math.min(PDF_TOKENS_MAX, Math.ceil(file.size / 8));
  return name + Math.ceil(file.size / 3);
}
