import { z } from 'zod';
import type { ModelMessage, ModelStreamPart } from '../model-provider.js';
import { missingTerminator, streamedFailure } from '../provider-error.js';
import type { ProviderSettings } from '../provider-config.js';
import { ndjsonLines, parseStreamPayload } from '../upstream/stream-frames.js';
import { HttpModelProvider } from './http-model-provider.js';
import { chatMessages, TokenCountSchema, toFinishReason, tokenUsage } from './vendor-formats.js';

/**
 * One line of Ollama's `/api/chat` stream, as far as CPP reads it: message text while streaming, then a last line
 * with `done: true`, the stop reason and the token counts. A failure mid-stream is a line `{"error": "..."}`.
 */
export const OllamaChatLineSchema = z.object({
  message: z.object({ content: z.string().nullish(), thinking: z.string().nullish() }).nullish(),
  done: z.boolean().nullish(),
  done_reason: z.string().nullish(),
  prompt_eval_count: TokenCountSchema.nullish(),
  eval_count: TokenCountSchema.nullish(),
  error: z.string().nullish(),
});

const VENDOR = 'Ollama';

/**
 * Ollama's native `/api/chat` (NDJSON). Written on node:http (see upstream/http-post.ts) rather than the `ollama` package:
 * that package skips malformed lines with a console warning instead of failing, and cannot abort a request before
 * its response headers arrive (the first-token timeout needs to). A plain local Ollama needs no key; one behind an
 * authenticating proxy (or Ollama's cloud) takes a bearer token.
 */
export class OllamaProvider extends HttpModelProvider {
  readonly provider = 'ollama';

  constructor(settings: ProviderSettings) {
    super(settings, VENDOR);
  }

  protected async *attempt(messages: readonly ModelMessage[], signal: AbortSignal): AsyncGenerator<ModelStreamPart> {
    const body = await this.post('/api/chat', this.requestBody(messages), signal);
    for await (const line of ndjsonLines(body, VENDOR)) {
      const chunk = parseStreamPayload(line, OllamaChatLineSchema, VENDOR, 'a chat response line');
      if (chunk.error) throw streamedFailure(VENDOR, chunk.error, this.settings.apiKey);
      if (chunk.message?.thinking) yield { type: 'reasoning-delta', text: chunk.message.thinking };
      if (chunk.message?.content) yield { type: 'text-delta', text: chunk.message.content };
      if (chunk.done) {
        const usage = tokenUsage(chunk.prompt_eval_count, chunk.eval_count);
        yield { type: 'finish', finishReason: toFinishReason(chunk.done_reason), ...(usage ? { usage } : {}) };
        return;
      }
    }
    throw missingTerminator(VENDOR, 'a line with "done": true');
  }

  private requestBody(messages: readonly ModelMessage[]): Record<string, unknown> {
    const { model, systemPrompt, temperature, maxTokens } = this.settings;
    const options = {
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { num_predict: maxTokens } : {}),
    };
    return {
      model,
      messages: chatMessages(messages, systemPrompt),
      stream: true,
      ...(Object.keys(options).length > 0 ? { options } : {}),
    };
  }
}
