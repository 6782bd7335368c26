import type { TokenCounter } from './token-counter.js';

/**
 * How much a model reads and writes in one call, in tokens: the window, and the part of it kept for the answer. The
 * branch sent to the model is fitted into the rest (docs/PROTOCOL.md §28).
 */
export interface ContextWindow {
  tokens: number;
  reservedOutputTokens: number;
  /** Sent with every call besides the branch (the system prompt), counted against the window: estimated tokens. */
  fixedTokens: number;
  /**
   * The model's tokens per estimated token, as its provider's reported usage last showed them (1 until it reports):
   * the window holds `(tokens - reservedOutputTokens) / estimateScale` estimated tokens.
   */
  estimateScale: number;
  /** How the model's tokens are counted: its tokenizer, or the estimate. */
  counter: TokenCounter;
}

/** How far one report may move the scale: a provider that counts oddly once cannot make a window useless. */
const ESTIMATE_SCALE_BOUNDS = [0.25, 4] as const;

/**
 * The scale a provider's reported usage gives: the input tokens it counted for a call over the tokens estimated for
 * that call (its context and its system prompt), within ESTIMATE_SCALE_BOUNDS. Undefined when there is nothing to go by.
 */
export function estimateScaleOf(estimatedTokens: number, reportedInputTokens: number | undefined): number | undefined {
  if (reportedInputTokens === undefined || reportedInputTokens <= 0 || estimatedTokens <= 0) return undefined;
  const [lowest, highest] = ESTIMATE_SCALE_BOUNDS;
  return Math.min(highest, Math.max(lowest, reportedInputTokens / estimatedTokens));
}

/**
 * The window of a model whose configuration names none, by provider kind; documented in docs/providers.md, keep the
 * two in step. OpenAI's gpt-4o family and Anthropic's Claude models read 128,000 and 200,000 tokens; Ollama reads
 * 4,096 unless its `num_ctx` is raised (and silently drops the start of a longer prompt); the demo's small window lets
 * the conformance kit see a branch fitted. A provider of another kind (one an application wrote, an AI SDK model) has
 * no window unless configured with one: its branch is sent whole, as it was before windows were known.
 */
export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'openai-compatible': 128_000,
  anthropic: 200_000,
  ollama: 4_096,
  demo: 2_048,
};

/** The answer's room when none is configured: 4,096 tokens, or a quarter of a smaller window. */
export function defaultReservedOutputTokens(window: number): number {
  return Math.min(4_096, Math.floor(window / 4));
}
