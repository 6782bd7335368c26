import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';

/** One turn of the context given to a model: the branch from the root to the new prompt, nothing else. */
export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelRequest {
  messages: ModelMessage[];
  /**
   * The last message is the assistant's own answer, cut short, which the model goes on with (CPP_CONTINUE): what it
   * streams follows that text and does not repeat it. A provider with an assistant prefill gives the text as one;
   * the others send `messagesToContinue(messages)`.
   */
  continues?: boolean;
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
  | { type: 'finish'; finishReason: FinishReason; usage?: TokenUsage };

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
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
