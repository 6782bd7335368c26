import { APICallError, type LanguageModel, streamText } from 'ai';
import { DEFAULT_GENERATION_POLICY, type GenerationPolicy, runGeneration } from '../generation-runner.js';
import {
  messagesToContinue,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamPart,
} from '../model-provider.js';
import {
  malformedStream,
  missingTerminator,
  type ProviderError,
  retryAfterMs,
  statusFailure,
  streamedFailure,
} from '../provider-error.js';
import { lineTooLong } from '../upstream/bounded-fetch.js';
import { streamChunks } from '../upstream/stream-chunks.js';
import { toFinishReason, tokenUsage } from './vendor-formats.js';

/** For the model's provider factory (`createOpenAI({ fetch: boundedFetch() })`): the bridge cannot reach its HTTP. */
export { boundedFetch } from '../upstream/bounded-fetch.js';

export interface AiSdkProviderOptions {
  /** A model from any AI SDK provider package, e.g. `openai('gpt-4o-mini')` or `google('gemini-2.5-flash')`. */
  model: Exclude<LanguageModel, string>;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  policy?: Partial<GenerationPolicy>;
}

/**
 * Serves CPP from any Vercel AI SDK language model (AI SDK 6, the last major that runs on Node 20), so every AI SDK
 * provider plugs in. Imported from `@promethea/cpp-server/ai-sdk`, since `ai` is an optional peer dependency.
 * The AI SDK's own retries are off: the generation retries, as for every provider.
 */
export class AiSdkProvider implements ModelProvider {
  readonly provider: string;
  readonly model: string;
  private readonly vendor: string;
  private readonly policy: GenerationPolicy;

  constructor(private readonly options: AiSdkProviderOptions) {
    this.provider = `ai-sdk:${options.model.provider}`;
    this.model = options.model.modelId;
    this.vendor = `AI SDK provider ${options.model.provider}`;
    this.policy = { ...DEFAULT_GENERATION_POLICY, ...options.policy };
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return runGeneration(request.signal, {
      vendor: this.vendor,
      policy: this.policy,
      open: (signal) => this.attempt(messagesToContinue(request), signal),
      describeFailure: (error) => this.describeFailure(error),
    });
  }

  private async *attempt(messages: readonly ModelMessage[], signal: AbortSignal): AsyncGenerator<ModelStreamPart> {
    const { model, systemPrompt, temperature, maxTokens } = this.options;
    const result = streamText({
      model,
      messages: messages.map(({ role, content }) => ({ role, content })),
      abortSignal: signal,
      maxRetries: 0,
      // Errors arrive as `error` parts below; without a handler the AI SDK also prints them.
      onError: () => undefined,
      ...(systemPrompt ? { system: systemPrompt } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
    });
    // An AI SDK stream ends on abort only if the model's own stream does; cancelling it ends it in any case.
    for await (const part of streamChunks(result.fullStream, signal)) {
      switch (part.type) {
        case 'text-delta':
          if (part.text) yield { type: 'text-delta', text: part.text };
          break;
        case 'reasoning-delta':
          if (part.text) yield { type: 'reasoning-delta', text: part.text };
          break;
        case 'finish': {
          const usage = tokenUsage(part.totalUsage.inputTokens, part.totalUsage.outputTokens);
          yield { type: 'finish', finishReason: toFinishReason(part.finishReason), ...(usage ? { usage } : {}) };
          return;
        }
        case 'error':
          throw part.error;
        case 'abort':
          // Cancelled or timed out: the generation knows which.
          return;
        default:
          break;
      }
    }
    // Reached when cancelled (the generation then reports the abort or the timeout): streamText itself always ends
    // with a finish part, so a model's stream cut short is caught only if its provider package notices.
    throw missingTerminator(this.vendor, 'a finish part');
  }

  private describeFailure(error: unknown): ProviderError {
    const tooLong = lineTooLong(error);
    if (tooLong) return malformedStream(this.vendor, tooLong.message, tooLong);
    if (APICallError.isInstance(error) && error.statusCode !== undefined) {
      const headers = error.responseHeaders ?? {};
      return statusFailure(this.vendor, {
        status: error.statusCode,
        vendorMessage: error.message,
        retryAfterMs: retryAfterMs((name) => headerOf(headers, name)),
      });
    }
    return streamedFailure(this.vendor, error instanceof Error ? error.message : String(error));
  }
}

/** AI SDK providers keep the response's header names as the server sent them. */
function headerOf(headers: Record<string, string>, name: string): string | undefined {
  return Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}
