import { z } from 'zod';

const TokenCount = z.number().int().nonnegative();

/**
 * One line of Ollama's `/api/chat` stream, as far as CPP reads it: message text while streaming, then a last line
 * with `done: true`, the stop reason and the token counts. A failure mid-stream is a line `{"error": "..."}`.
 */
export const OllamaChatLineSchema = z.object({
  message: z.object({ content: z.string().nullish() }).nullish(),
  done: z.boolean().nullish(),
  done_reason: z.string().nullish(),
  prompt_eval_count: TokenCount.nullish(),
  eval_count: TokenCount.nullish(),
  error: z.string().nullish(),
});
