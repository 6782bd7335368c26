import { z } from 'zod';

const TokenCount = z.number().int().nonnegative();

/**
 * One `data:` payload of an OpenAI chat-completions stream, as far as CPP reads it. Servers differ in what else they
 * send (roles, tool calls, logprobs, null for absent fields), so only the fields used here are checked. Some
 * servers (OpenRouter, vLLM) report a failure mid-stream as `{"error": {...}}`.
 */
export const ChatCompletionChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z.object({ content: z.string().nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: TokenCount.nullish(), completion_tokens: TokenCount.nullish() }).nullish(),
  error: z.object({ message: z.string(), code: z.union([z.string(), z.number()]).nullish() }).nullish(),
});
