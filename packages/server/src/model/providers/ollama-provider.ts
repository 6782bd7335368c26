import { isImageType } from '@promethea/cpp-protocol';
import { z } from 'zod';
import { base64, type FileMessage, withFiles } from '../model-files.js';
import type { ModelMessage, ModelStreamPart, ModelTool } from '../model-provider.js';
import { missingTerminator, streamedFailure } from '../provider-error.js';
import type { ProviderSettings } from '../provider-config.js';
import { ndjsonLines, parseStreamPayload } from '../upstream/stream-frames.js';
import { HttpModelProvider } from './http-model-provider.js';
import { ToolCallParts } from './tool-call-parts.js';
import {
  chatMessages,
  chatTools,
  TokenCountSchema,
  toFinishReason,
  tokenUsage,
  toolInputObject,
} from './vendor-formats.js';

/**
 * One line of Ollama's `/api/chat` stream, as far as CPP reads it: message text while streaming, then a last line
 * with `done: true`, the stop reason and the token counts. A failure mid-stream is a line `{"error": "..."}`.
 */
export const OllamaChatLineSchema = z.object({
  message: z
    .object({
      content: z.string().nullish(),
      thinking: z.string().nullish(),
      // Ollama sends each call whole, its arguments an object, in one line.
      tool_calls: z
        .array(
          z.object({
            id: z.string().nullish(),
            function: z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).nullish() }),
          }),
        )
        .nullish(),
    })
    .nullish(),
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
  readonly readsAttachments = true;

  constructor(settings: ProviderSettings) {
    super(settings, VENDOR);
  }

  protected async *attempt(
    messages: readonly ModelMessage[],
    tools: readonly ModelTool[],
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    const prepared = await withFiles(messages, (type) => this.settings.vision && isImageType(type));
    const body = await this.post('/api/chat', this.requestBody(prepared, tools), signal);
    const toolCalls = new ToolCallParts();
    let callCount = 0;
    for await (const line of ndjsonLines(body, VENDOR)) {
      const chunk = parseStreamPayload(line, OllamaChatLineSchema, VENDOR, 'a chat response line');
      if (chunk.error) throw streamedFailure(VENDOR, chunk.error, this.settings.apiKey);
      if (chunk.message?.thinking) yield { type: 'reasoning-delta', text: chunk.message.thinking };
      if (chunk.message?.content) yield { type: 'text-delta', text: chunk.message.content };
      for (const call of chunk.message?.tool_calls ?? []) {
        // Versions before 0.12 name no call: an id unique within the step stands in.
        const toolCallId = call.id || `call_${callCount}`;
        callCount += 1;
        yield* toolCalls.whole(toolCallId, call.function.name, JSON.stringify(call.function.arguments ?? {}));
      }
      if (chunk.done) {
        const usage = tokenUsage(chunk.prompt_eval_count, chunk.eval_count);
        yield { type: 'finish', finishReason: toFinishReason(chunk.done_reason), ...(usage ? { usage } : {}) };
        return;
      }
    }
    throw missingTerminator(VENDOR, 'a line with "done": true');
  }

  private requestBody(messages: readonly FileMessage[], tools: readonly ModelTool[]): Record<string, unknown> {
    const { model, systemPrompt, temperature, maxTokens } = this.settings;
    const options = {
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { num_predict: maxTokens } : {}),
    };
    return {
      model,
      messages: chatMessages(messages, systemPrompt, ollamaMessage),
      stream: true,
      ...(tools.length > 0 ? { tools: chatTools(tools) } : {}),
      ...(Object.keys(options).length > 0 ? { options } : {}),
    };
  }
}

/**
 * A turn as /api/chat spells it: a call's arguments are an object, a result names its tool, and a prompt's images
 * are base64 in `images`.
 */
function ollamaMessage(message: FileMessage): Record<string, unknown> {
  if (message.role === 'tool') return { role: 'tool', tool_name: message.toolName, content: message.content };
  if (message.role === 'user' && message.files?.length)
    return { role: 'user', content: message.content, images: message.files.map(base64) };
  if (message.role === 'user' || !message.toolCalls?.length) return { role: message.role, content: message.content };
  return {
    role: 'assistant',
    content: message.content,
    tool_calls: message.toolCalls.map(({ toolName, input }) => ({
      function: { name: toolName, arguments: toolInputObject(input) },
    })),
  };
}
