import Anthropic from '@anthropic-ai/sdk';
import { anthropicMessages } from './anthropic-messages.js';
import { describeAnthropicFailure } from './anthropic-failure.js';
import { boundedFetch } from './bounded-fetch.js';
import { toFinishReason } from './finish-reason.js';
import { runGeneration } from './generation.js';
import type { ModelMessage, ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';
import type { ProviderSettings } from './provider-settings.js';
import { tokenUsage } from './token-usage.js';
import { untilTerminator } from './until-terminator.js';
import { missingTerminator } from './upstream-failures.js';

const VENDOR = 'Anthropic';

/**
 * The Anthropic Messages API, streamed through Anthropic's own SDK: it yields every raw event (so a stream cut before
 * `message_stop` is caught here), turns `error` events into errors with the vendor's message, and takes a per-request
 * AbortSignal. Its own retries are off: the generation decides, in one place for every provider.
 */
export class AnthropicProvider implements ModelProvider {
  readonly provider = 'anthropic';
  readonly model: string;
  private readonly client: Anthropic;

  /** `maxTokens` is required by the Messages API. */
  constructor(private readonly settings: ProviderSettings & { apiKey: string; maxTokens: number }) {
    this.model = settings.model;
    this.client = new Anthropic({
      apiKey: settings.apiKey,
      baseURL: settings.baseUrl,
      maxRetries: 0,
      logLevel: 'off',
      // The SDK's SSE parser keeps a pending line without limit.
      fetch: boundedFetch(),
    });
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return runGeneration(request.signal, {
      vendor: VENDOR,
      policy: this.settings.policy,
      open: (signal) => this.attempt(request.messages, signal),
      describeFailure: (error) => describeAnthropicFailure(VENDOR, error, this.settings.apiKey),
    });
  }

  private async *attempt(messages: readonly ModelMessage[], signal: AbortSignal): AsyncGenerator<ModelStreamPart> {
    const { model, maxTokens, systemPrompt, temperature } = this.settings;
    const events = await this.client.messages.create(
      {
        model,
        max_tokens: maxTokens,
        messages: anthropicMessages(messages),
        stream: true,
        ...(systemPrompt ? { system: systemPrompt } : {}),
        ...(temperature !== undefined ? { temperature } : {}),
      },
      { signal },
    );
    let inputTokens: number | null = null;
    let outputTokens: number | null = null;
    let stopReason: string | null = null;
    for await (const event of untilTerminator(events, (event) => event.type === 'message_stop')) {
      switch (event.type) {
        case 'message_start':
          inputTokens = event.message.usage.input_tokens;
          outputTokens = event.message.usage.output_tokens;
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta' && event.delta.text) yield { type: 'text-delta', text: event.delta.text };
          break;
        case 'message_delta':
          // The counts in message_delta are cumulative for the whole message.
          inputTokens = event.usage.input_tokens ?? inputTokens;
          outputTokens = event.usage.output_tokens;
          stopReason = event.delta.stop_reason ?? stopReason;
          break;
        case 'message_stop': {
          const usage = tokenUsage(inputTokens, outputTokens);
          yield { type: 'finish', finishReason: toFinishReason(stopReason), ...(usage ? { usage } : {}) };
          return;
        }
        default:
          // content_block_start/stop carry no text of a text block; ping is keep-alive.
          break;
      }
    }
    // Also reached when the SDK ends quietly on an abort; the generation then reports the cancellation or timeout.
    throw missingTerminator(VENDOR, 'message_stop');
  }
}
