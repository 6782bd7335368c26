import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { isImageType } from '@promethea/cpp-protocol';
import { base64, type FileMessage, type LoadedFile, withFiles } from '../model-files.js';
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
  connectionFailure,
  malformedStream,
  missingTerminator,
  type ProviderError,
  retryAfterMs,
  statusFailure,
  streamedFailure,
} from '../provider-error.js';
import type { ProviderSettings } from '../provider-config.js';
import { runGeneration } from '../generation-runner.js';
import { boundedFetch, lineTooLong } from '../upstream/bounded-fetch.js';
import { untilTerminator } from '../upstream/until-terminator.js';
import { ToolCallParts } from './tool-call-parts.js';
import { toFinishReason, tokenUsage, toolInputObject } from './vendor-formats.js';

const VENDOR = 'Anthropic';

/**
 * The Anthropic Messages API, streamed through Anthropic's own SDK: it yields every raw event (so a stream cut before
 * `message_stop` is caught here), turns `error` events into errors with the vendor's message, and takes a per-request
 * AbortSignal. Its own retries are off: the generation decides, in one place for every provider.
 */
export class AnthropicProvider implements ModelProvider {
  readonly provider = 'anthropic';
  readonly readsAttachments = true;
  readonly model: string;
  readonly reasoning: boolean;
  private readonly client: Anthropic;

  /** `maxTokens` is required by the Messages API. */
  constructor(private readonly settings: ProviderSettings & { apiKey: string; maxTokens: number }) {
    this.model = settings.model;
    this.reasoning = settings.reasoning;
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
      // A partial answer is continued by prefilling it as the last assistant turn, which extended thinking does not
      // allow: with thinking on, the model is asked to continue it instead.
      open: (signal) =>
        this.attempt(
          this.settings.thinkingBudgetTokens === undefined ? request.messages : messagesToContinue(request),
          request.tools ?? [],
          signal,
        ),
      describeFailure: (error) => describeAnthropicFailure(VENDOR, error, this.settings.apiKey),
    });
  }

  private async *attempt(
    messages: readonly ModelMessage[],
    tools: readonly ModelTool[],
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    const { model, maxTokens, systemPrompt, temperature, thinkingBudgetTokens } = this.settings;
    const thinking =
      thinkingBudgetTokens === undefined
        ? undefined
        : { type: 'enabled' as const, budget_tokens: thinkingBudgetTokens };
    const events = await this.client.messages.create(
      {
        model,
        // max_tokens counts the thinking too, and must exceed its budget.
        max_tokens: maxTokens + (thinkingBudgetTokens ?? 0),
        messages: anthropicMessages(
          await withFiles(
            messages,
            (type) => this.settings.vision && (isImageType(type) || type === 'application/pdf'),
          ),
        ),
        stream: true,
        ...(systemPrompt ? { system: systemPrompt } : {}),
        // Extended thinking refuses a changed temperature.
        ...(temperature !== undefined && !thinking ? { temperature } : {}),
        ...(thinking ? { thinking } : {}),
        ...(tools.length > 0 ? { tools: tools.map(anthropicTool) } : {}),
      },
      { signal },
    );
    let inputTokens: number | null = null;
    let outputTokens: number | null = null;
    let stopReason: string | null = null;
    const toolCalls = new ToolCallParts();
    for await (const event of untilTerminator(events, (event) => event.type === 'message_stop')) {
      switch (event.type) {
        case 'message_start':
          inputTokens = event.message.usage.input_tokens;
          outputTokens = event.message.usage.output_tokens;
          break;
        case 'content_block_start':
          if (event.content_block.type === 'tool_use')
            yield* toolCalls.start(event.index, event.content_block.id, event.content_block.name);
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta' && event.delta.text)
            yield { type: 'text-delta', text: event.delta.text };
          else if (event.delta.type === 'thinking_delta' && event.delta.thinking)
            yield { type: 'reasoning-delta', text: event.delta.thinking };
          else if (event.delta.type === 'input_json_delta')
            yield* toolCalls.delta(event.index, event.delta.partial_json);
          break;
        case 'content_block_stop':
          yield* toolCalls.end(event.index);
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
          // ping is keep-alive.
          break;
      }
    }
    // Also reached when the SDK ends quietly on an abort; the generation then reports the cancellation or timeout.
    throw missingTerminator(VENDOR, 'message_stop');
  }
}

/** Anthropic needs a user turn first; stands in when the branch starts with an assistant turn. */
const OPENING_TURN = '(The conversation so far follows.)';

/**
 * The branch in the Messages API's shape: roles strictly alternate, starting with the user. Consecutive turns of one
 * role (a prompt after a failed or skipped answer; a tool's results, which are a user turn here, and the prompt after
 * them) are merged, and whitespace-only text, which the API rejects, is left out. A last assistant turn (a partial
 * answer to continue) is the prefill the model goes on from, without the trailing white space the API refuses in one.
 * A turn of text only is a string, its texts joined by a blank line; one with tool calls or results is a list of
 * blocks, results first as the API requires.
 */
export function anthropicMessages(messages: readonly FileMessage[]): MessageParam[] {
  const turns: Array<{ role: 'user' | 'assistant'; blocks: ContentBlockParam[] }> = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = anthropicBlocks(message);
    if (blocks.length === 0) continue;
    const previous = turns.at(-1);
    if (previous?.role === role) previous.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', blocks: [{ type: 'text', text: OPENING_TURN }] });
  const last = turns.at(-1)?.blocks.at(-1);
  if (turns.at(-1)?.role === 'assistant' && last?.type === 'text') last.text = last.text.trimEnd();
  return turns.map(({ role, blocks }) => ({
    role,
    content: blocks.every((block) => block.type === 'text')
      ? blocks.map((block) => block.text).join('\n\n')
      : [
          ...blocks.filter((block) => block.type === 'tool_result'),
          ...blocks.filter((block) => block.type !== 'tool_result'),
        ],
  }));
}

function anthropicBlocks(message: FileMessage): ContentBlockParam[] {
  if (message.role === 'tool') {
    return [
      {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content,
        ...(message.isError ? { is_error: true } : {}),
      },
    ];
  }
  const text = promptText(message.content).map((said): ContentBlockParam => ({ type: 'text', text: said }));
  // Files first: Anthropic's guidance puts images and documents before the text about them.
  if (message.role === 'user') return [...(message.files ?? []).map(anthropicFile), ...text];
  const calls = (message.toolCalls ?? []).map(
    ({ toolCallId, toolName, input }): ContentBlockParam => ({
      type: 'tool_use',
      id: toolCallId,
      name: toolName,
      input: toolInputObject(input),
    }),
  );
  return [...text, ...calls];
}

/** An image as an `image` block, a PDF as a `document` block (the model reads its pages), both base64. */
function anthropicFile(file: LoadedFile): ContentBlockParam {
  if (file.mediaType === 'application/pdf')
    return {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: base64(file) },
      title: file.name,
    };
  const mediaType = file.mediaType as 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: base64(file) } };
}

function anthropicTool({ name, description, inputSchema }: ModelTool): Tool {
  return {
    name,
    ...(description ? { description } : {}),
    input_schema: { type: 'object', ...inputSchema } as Tool.InputSchema,
  };
}

/** The HTTP status Anthropic documents for each error type, for error events that arrive inside a 200 stream. */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Maps the Anthropic SDK's errors; anything else is left to the generation's default (a network failure). */
export function describeAnthropicFailure(
  vendor: string,
  error: unknown,
  apiKey: string | undefined,
): ProviderError | undefined {
  if (error instanceof Anthropic.APIConnectionError) return connectionFailure(vendor, error.cause ?? error);
  if (error instanceof Anthropic.APIError) {
    const message = error.apiMessage ?? error.message;
    if (error.status !== undefined) {
      const { headers } = error;
      return statusFailure(vendor, {
        status: error.status,
        vendorMessage: message,
        apiKey,
        retryAfterMs: retryAfterMs((name) => headers?.get(name)),
      });
    }
    return streamedFailure(vendor, message, apiKey, error.type ? STATUS_OF_ERROR_TYPE[error.type] : undefined);
  }
  if (error instanceof SyntaxError) return malformedStream(vendor, 'an event whose data is not JSON', error);
  const tooLong = lineTooLong(error);
  return tooLong ? malformedStream(vendor, tooLong.message, tooLong) : undefined;
}
