import {
  APICallError,
  jsonSchema,
  type LanguageModel,
  type ModelMessage as AiSdkMessage,
  streamText,
  type ToolSet,
  tool,
} from 'ai';
import { isImageType } from '@promethea/cpp-protocol';
import { DEFAULT_GENERATION_POLICY, type GenerationPolicy, runGeneration } from '../generation-runner.js';
import { type FileMessage, withFiles } from '../model-files.js';
import { promptText } from '../attachments-as-text.js';
import {
  messagesToContinue,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamPart,
  type ModelTool,
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
import { ToolCallParts } from './tool-call-parts.js';
import { toFinishReason, tokenUsage, toolInputObject } from './vendor-formats.js';

/** For the model's provider factory (`createOpenAI({ fetch: boundedFetch() })`): the bridge cannot reach its HTTP. */
export { boundedFetch } from '../upstream/bounded-fetch.js';

export interface AiSdkProviderOptions {
  /** A model from any AI SDK provider package, e.g. `openai('gpt-4o-mini')` or `google('gemini-2.5-flash')`. */
  model: Exclude<LanguageModel, string>;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  /**
   * Whether the model sees images and PDFs, given as file parts (the AI SDK provider sends them in its vendor's
   * format). Default true; false: each file is given as text or a note naming it (docs/PROTOCOL.md §27.7).
   */
  vision?: boolean;
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
  readonly readsAttachments = true;
  readonly systemPrompt: string | undefined;
  private readonly vendor: string;
  private readonly policy: GenerationPolicy;

  constructor(private readonly options: AiSdkProviderOptions) {
    this.provider = `ai-sdk:${options.model.provider}`;
    this.model = options.model.modelId;
    this.systemPrompt = options.systemPrompt;
    this.vendor = `AI SDK provider ${options.model.provider}`;
    this.policy = { ...DEFAULT_GENERATION_POLICY, ...options.policy };
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return runGeneration(request.signal, {
      vendor: this.vendor,
      policy: this.policy,
      open: (signal) => this.attempt(messagesToContinue(request), request.tools ?? [], signal),
      describeFailure: (error) => this.describeFailure(error),
    });
  }

  private async *attempt(
    messages: readonly ModelMessage[],
    tools: readonly ModelTool[],
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    const { model, systemPrompt, temperature, maxTokens, vision = true } = this.options;
    const prepared = await withFiles(messages, (type) => vision && (isImageType(type) || type === 'application/pdf'));
    const result = streamText({
      model,
      messages: prepared.map(aiSdkMessage),
      // Tools without `execute`: streamText ends the step at the calls, and the server runs them (one step per call).
      ...(tools.length > 0 ? { tools: aiSdkTools(tools) } : {}),
      abortSignal: signal,
      maxRetries: 0,
      // Errors arrive as `error` parts below; without a handler the AI SDK also prints them.
      onError: () => undefined,
      ...(systemPrompt ? { system: systemPrompt } : {}),
      temperature,
      maxOutputTokens: maxTokens,
    });
    const toolCalls = new ToolCallParts();
    // An AI SDK stream ends on abort only if the model's own stream does; cancelling it ends it in any case.
    for await (const part of streamChunks(result.fullStream, signal)) {
      switch (part.type) {
        case 'tool-input-start':
          yield* toolCalls.start(part.id, part.id, part.toolName);
          break;
        case 'tool-input-delta':
          yield* toolCalls.delta(part.id, part.delta);
          break;
        case 'tool-call': {
          // A call the model's provider does not stream arrives whole. An invalid one (unknown tool, input that is
          // not JSON) carries its input as the model wrote it: the server's checks answer it.
          const input = typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {});
          if (toolCalls.has(part.toolCallId)) yield* toolCalls.end(part.toolCallId, input);
          else yield* toolCalls.whole(part.toolCallId, part.toolName, input);
          break;
        }
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

function aiSdkMessage(message: FileMessage): AiSdkMessage {
  if (message.role === 'tool') {
    const { toolCallId, toolName, content, isError } = message;
    const output = isError
      ? { type: 'error-text' as const, value: content }
      : { type: 'text' as const, value: content };
    return { role: 'tool', content: [{ type: 'tool-result', toolCallId, toolName, output }] };
  }
  if (message.role === 'user' && message.files?.length) {
    const files = message.files.map(({ name, mediaType, data }) => ({
      type: 'file' as const,
      data,
      mediaType,
      filename: name,
    }));
    const text = promptText(message.content).map((said) => ({ type: 'text' as const, text: said }));
    return { role: 'user', content: [...text, ...files] };
  }
  if (message.role === 'user' || !message.toolCalls?.length) return { role: message.role, content: message.content };
  return {
    role: 'assistant',
    content: [
      ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
      ...message.toolCalls.map(({ toolCallId, toolName, input }) => ({
        type: 'tool-call' as const,
        toolCallId,
        toolName,
        input: toolInputObject(input),
      })),
    ],
  };
}

function aiSdkTools(tools: readonly ModelTool[]): ToolSet {
  return Object.fromEntries(
    tools.map(({ name, description, inputSchema }) => [
      name,
      tool({ ...(description ? { description } : {}), inputSchema: jsonSchema(inputSchema) }),
    ]),
  );
}
