/**
 * How much a model reads and writes in one call, in tokens: the window, and the part of it kept for the answer. The
 * branch sent to the model is fitted into the rest (docs/PROTOCOL.md §28).
 */
export interface ContextWindow {
  tokens: number;
  reservedOutputTokens: number;
  /** Sent with every call besides the branch (the system prompt), counted against the window. */
  fixedTokens: number;
}

/**
 * The window of a model whose configuration names none, by provider kind; documented in docs/providers.md, keep the
 * two in step. OpenAI's gpt-4o family and Anthropic's Claude models read 128,000 and 200,000 tokens; Ollama reads
 * 4,096 unless its `num_ctx` is raised (and silently drops the start of a longer prompt); the demo's small window lets
 * the conformance kit see a branch fitted. A provider of another kind gets the smallest common window, 8,192.
 */
export const DEFAULT_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'openai-compatible': 128_000,
  anthropic: 200_000,
  ollama: 4_096,
  demo: 2_048,
};
export const FALLBACK_CONTEXT_WINDOW = 8_192;

/** The answer's room when none is configured: 4,096 tokens, or a quarter of a smaller window. */
export function defaultReservedOutputTokens(window: number): number {
  return Math.min(4_096, Math.floor(window / 4));
}
