import type { Attachment, FinishReason, TokenUsage } from '@promethea/cpp-protocol';

/**
 * One turn of the context given to a model: the branch from the root to the new prompt, nothing else. An assistant
 * turn may end in tool calls; each call's result follows it as a `tool` turn, in the order of the calls.
 */
export type ModelMessage = ModelUserMessage | ModelAssistantMessage | ModelToolMessage;

export interface ModelUserMessage {
  role: 'user';
  content: string;
  /** The files the prompt carried (docs/PROTOCOL.md §27), in its order; absent or empty: none. */
  attachments?: readonly ModelAttachment[];
}

/** A file given to a model: what the node says of it, and its bytes, read from the store when the provider asks. */
export interface ModelAttachment extends Omit<Attachment, 'id'> {
  bytes(): Promise<Uint8Array>;
}

export interface ModelAssistantMessage {
  role: 'assistant';
  content: string;
  /** The tools this turn called, after its text; absent or empty: none. */
  toolCalls?: readonly ModelToolCall[];
}

/** A tool call as a model made it: `input` is the JSON text of the arguments, as the model wrote it. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  input: string;
}

/** The result of one tool call, given back to the model: what the tool returned, or why it gave nothing. */
export interface ModelToolMessage {
  role: 'tool';
  toolCallId: string;
  toolName: string;
  /** The tool's output as text, or the error (a failure, a denial, an interruption) the model is told instead. */
  content: string;
  /** The call gave no output: `content` says why. */
  isError?: boolean;
}

/** A tool a model may call: its name, what it is for, and the JSON Schema (draft 2020-12 or 7) of its input object. */
export interface ModelTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  messages: ModelMessage[];
  /**
   * The last message is the assistant's own answer, cut short, which the model goes on with (CPP_CONTINUE): what it
   * streams follows that text and does not repeat it. A provider with an assistant prefill gives the text as one;
   * the others send `messagesToContinue(messages)`.
   */
  continues?: boolean;
  /** The tools the model may call in this step; absent or empty: none. */
  tools?: readonly ModelTool[];
  /** Aborted on pivot, stop or shutdown: the provider must end its upstream request at once. */
  signal: AbortSignal;
}

/** What a model without an assistant prefill is asked after its partial answer, to go on with it. */
export const CONTINUE_INSTRUCTION =
  'Your previous answer was cut off. Continue it exactly where it stopped, without repeating any of it and without remarking on the interruption.';

/** The messages of a request, and, when it continues a partial answer, the instruction to go on with it. */
export function messagesToContinue(request: Pick<ModelRequest, 'messages' | 'continues'>): ModelMessage[] {
  return request.continues ? [...request.messages, { role: 'user', content: CONTINUE_INSTRUCTION }] : request.messages;
}

/**
 * Parts of a model stream, keyed on `type` as in the AI SDK. `reasoning-delta` is text a model reasons in before (or
 * between) its answer's text: never part of the answer. It keeps a reasoning model's stream alive for the first-token
 * and stall timeouts, and streams to clients as the node's reasoning.
 */
export type ModelStreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | ToolCallStreamPart
  | { type: 'finish'; finishReason: FinishReason; usage?: TokenUsage };

/**
 * A tool call as it streams: `tool-input-start` names the call and its tool, `tool-input-delta`s carry pieces of its
 * input's JSON text, and `tool-call` gives the whole input once the model has written it. Parallel calls of one
 * step may interleave; `toolCallId` tells them apart. Every started call ends in a `tool-call` before `finish`.
 */
export type ToolCallStreamPart =
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; delta: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string };

/**
 * A language model that streams text. `stream` yields text and reasoning deltas and at most one `finish`; it throws a
 * `ProviderError` on failure, and stops (throwing or returning) promptly once `signal` is aborted.
 */
export interface ModelProvider {
  /** The provider kind, for logs and the CLI banner, e.g. `demo` or `openai-compatible`. */
  readonly provider: string;
  /** The model's name upstream; a server's only model is listed, and recorded on its answers, under it. */
  readonly model: string;
  /** Whether the model reasons before it answers, for clients to show. Default: false. */
  readonly reasoning?: boolean;
  /**
   * Whether the provider reads `ModelUserMessage.attachments` itself. Default false: the server gives it each file
   * as text instead (`attachmentsAsText`), so that no file is silently dropped.
   */
  readonly readsAttachments?: boolean;
  /** What the provider sends before every context, if anything: it counts against the model's context window. */
  readonly systemPrompt?: string | undefined;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
