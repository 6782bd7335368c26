import type { TokenUsage } from '@promethea/cpp-protocol';

/** Token counts as stored on a node: absent counts are left out, and no counts at all is no usage. */
export function tokenUsage(inputTokens: number | null | undefined, outputTokens: number | null | undefined): TokenUsage | undefined {
  const usage: TokenUsage = {};
  if (typeof inputTokens === 'number') usage.inputTokens = inputTokens;
  if (typeof outputTokens === 'number') usage.outputTokens = outputTokens;
  return Object.keys(usage).length > 0 ? usage : undefined;
}
