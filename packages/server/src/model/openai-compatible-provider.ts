import type { TokenUsage } from '@promethea/cpp-protocol';
import { chatMessages } from './chat-messages.js';
import { toFinishReason } from './finish-reason.js';
import { HttpModelProvider } from './http-model-provider.js';
import type { ModelMessage, ModelStreamPart } from './model-provider.js';
import { ChatCompletionChunkSchema } from './openai-chunk.js';
import type { ProviderSettings } from './provider-settings.js';
import { parseStreamPayload } from './stream-payload.js';
import { tokenUsage } from './token-usage.js';
import { serverSentEvents } from './server-sent-events.js';
import { missingTerminator, streamedFailure } from './upstream-failures.js';

const VENDOR = 'OpenAI-compatible server';

/**
 * Chat completions streaming as OpenAI defines it, which OpenAI, Ollama's /v1, vLLM, llama.cpp's server, LM Studio,
 * Groq and OpenRouter all speak. Written on node:http (see http-post.ts) rather than the openai SDK: the SDK ends
 * quietly when a stream stops before `data: [DONE]`, so a cut answer would pass for a complete one.
 */
export class OpenAICompatibleProvider extends HttpModelProvider {
  readonly provider = 'openai-compatible';

  constructor(settings: ProviderSettings) {
    super(settings, VENDOR);
  }

  protected async *attempt(messages: readonly ModelMessage[], signal: AbortSignal): AsyncGenerator<ModelStreamPart> {
    const body = await this.post('/chat/completions', this.requestBody(messages), signal, { accept: 'text/event-stream' });
    let finishReason: string | undefined;
    let usage: TokenUsage | undefined;
    for await (const event of serverSentEvents(body, VENDOR)) {
      if (event.data === '[DONE]') {
        yield { type: 'finish', finishReason: toFinishReason(finishReason), ...(usage ? { usage } : {}) };
        return;
      }
      const chunk = parseStreamPayload(event.data, ChatCompletionChunkSchema, VENDOR, 'a chat completion chunk');
      if (chunk.error) throw streamedFailure(VENDOR, chunk.error.message, this.settings.apiKey);
      const choice = chunk.choices?.[0];
      if (choice?.delta?.content) yield { type: 'text-delta', text: choice.delta.content };
      finishReason = choice?.finish_reason ?? finishReason;
      usage = tokenUsage(chunk.usage?.prompt_tokens, chunk.usage?.completion_tokens) ?? usage;
    }
    throw missingTerminator(VENDOR, 'data: [DONE]');
  }

  private requestBody(messages: readonly ModelMessage[]): Record<string, unknown> {
    const { model, systemPrompt, temperature, maxTokens } = this.settings;
    return {
      model,
      messages: chatMessages(messages, systemPrompt),
      stream: true,
      stream_options: { include_usage: true },
      ...(temperature !== undefined ? { temperature } : {}),
      // `max_tokens` rather than `max_completion_tokens`: every compatible server accepts it.
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    };
  }
}
