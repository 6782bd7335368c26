import { isImageType, type TokenUsage } from '@promethea/cpp-protocol';
import { z } from 'zod';
import { dataUrl, type FileMessage, withFiles } from '../model-files.js';
import { promptText } from '../attachments-as-text.js';
import type { ModelMessage, ModelStreamPart, ModelTool } from '../model-provider.js';
import { missingTerminator, streamedFailure } from '../provider-error.js';
import type { ProviderSettings } from '../provider-config.js';
import { parseStreamPayload, serverSentEvents } from '../upstream/stream-frames.js';
import { HttpModelProvider } from './http-model-provider.js';
import { ToolCallParts } from './tool-call-parts.js';
import { chatMessages, chatTools, TokenCountSchema, toFinishReason, tokenUsage } from './vendor-formats.js';

/**
 * One `data:` payload of an OpenAI chat-completions stream, as far as CPP reads it. Servers differ in what else they
 * send (roles, tool calls, logprobs, null for absent fields), so only the fields used here are checked. Some
 * servers (OpenRouter, vLLM) report a failure mid-stream as `{"error": {...}}`.
 */
export const ChatCompletionChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        // Reasoning as DeepSeek and vLLM send it (`reasoning_content`), and as OpenRouter and others do (`reasoning`).
        delta: z
          .object({
            content: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            // A call's first piece has its id and name, the later ones more of its arguments' JSON text; parallel
            // calls of one step are told apart by `index`.
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative().nullish(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({ prompt_tokens: TokenCountSchema.nullish(), completion_tokens: TokenCountSchema.nullish() })
    .nullish(),
  error: z.object({ message: z.string(), code: z.union([z.string(), z.number()]).nullish() }).nullish(),
});

const VENDOR = 'OpenAI-compatible server';

/**
 * Chat completions streaming as OpenAI defines it, which OpenAI, Ollama's /v1, vLLM, llama.cpp's server, LM Studio,
 * Groq and OpenRouter all speak. Written on node:http (see upstream/http-post.ts) rather than the openai SDK: the SDK ends
 * quietly when a stream stops before `data: [DONE]`, so a cut answer would pass for a complete one.
 */
export class OpenAICompatibleProvider extends HttpModelProvider {
  readonly provider = 'openai-compatible';
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
    const body = await this.post('/chat/completions', this.requestBody(prepared, tools), signal, {
      accept: 'text/event-stream',
    });
    let finishReason: string | undefined;
    let usage: TokenUsage | undefined;
    const toolCalls = new ToolCallParts();
    for await (const event of serverSentEvents(body, VENDOR)) {
      if (event.data === '[DONE]') {
        yield* toolCalls.endAll();
        yield { type: 'finish', finishReason: toFinishReason(finishReason), ...(usage ? { usage } : {}) };
        return;
      }
      const chunk = parseStreamPayload(event.data, ChatCompletionChunkSchema, VENDOR, 'a chat completion chunk');
      if (chunk.error) throw streamedFailure(VENDOR, chunk.error.message, this.settings.apiKey);
      const choice = chunk.choices?.[0];
      const reasoning = choice?.delta?.reasoning_content || choice?.delta?.reasoning;
      if (reasoning) yield { type: 'reasoning-delta', text: reasoning };
      if (choice?.delta?.content) yield { type: 'text-delta', text: choice.delta.content };
      for (const [position, piece] of (choice?.delta?.tool_calls ?? []).entries()) {
        const index = piece.index ?? position;
        if (!toolCalls.has(index)) {
          // Servers that do not name a call (some local ones) still get an id unique within the step.
          yield* toolCalls.start(index, piece.id || `call_${index}`, piece.function?.name ?? '');
        }
        yield* toolCalls.delta(index, piece.function?.arguments);
      }
      finishReason = choice?.finish_reason ?? finishReason;
      usage = tokenUsage(chunk.usage?.prompt_tokens, chunk.usage?.completion_tokens) ?? usage;
    }
    throw missingTerminator(VENDOR, 'data: [DONE]');
  }

  private requestBody(messages: readonly FileMessage[], tools: readonly ModelTool[]): Record<string, unknown> {
    const { model, systemPrompt, temperature, maxTokens, reasoning } = this.settings;
    // `max_tokens` for every compatible server, which all accept it; OpenAI's reasoning models refuse it and take
    // `max_completion_tokens`, a limit that also counts the reasoning tokens.
    const limit = reasoning ? 'max_completion_tokens' : 'max_tokens';
    return {
      model,
      messages: chatMessages(messages, systemPrompt, openAiMessage),
      stream: true,
      stream_options: { include_usage: true },
      ...(tools.length > 0 ? { tools: chatTools(tools) } : {}),
      temperature,
      [limit]: maxTokens,
    };
  }
}

/**
 * A turn as chat completions spell it: tool calls on the assistant's turn, each result a `tool` turn of its own; a
 * prompt's images as `image_url` parts with `data:` URLs after its text.
 */
function openAiMessage(message: FileMessage): Record<string, unknown> {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'user' && message.files?.length) {
    const images = message.files.map((file) => ({ type: 'image_url', image_url: { url: dataUrl(file) } }));
    const text = promptText(message.content).map((said) => ({ type: 'text', text: said }));
    return { role: 'user', content: [...text, ...images] };
  }
  if (message.role === 'user' || !message.toolCalls?.length) return { role: message.role, content: message.content };
  return {
    role: 'assistant',
    // OpenAI documents `null` for an assistant turn that only calls tools.
    content: message.content || null,
    tool_calls: message.toolCalls.map(({ toolCallId, toolName, input }) => ({
      id: toolCallId,
      type: 'function',
      function: { name: toolName, arguments: input },
    })),
  };
}
