import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';

/** One turn of the context given to a model: the branch from the root to the new prompt, nothing else. */
export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ModelRequest {
  messages: ModelMessage[];
  /** Aborted on pivot, stop or shutdown: the provider must end its upstream request at once. */
  signal: AbortSignal;
}

/**
 * Parts of a model stream, keyed on `type` as in the AI SDK. `reasoning-delta` is text a model reasons in before (or
 * between) its answer's text: never part of the answer. It keeps a reasoning model's stream alive for the first-token
 * and stall timeouts; the engine does not stream it to clients yet.
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
