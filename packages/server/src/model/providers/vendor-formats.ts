import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import { z } from 'zod';
import type { ModelTool } from '../model-provider.js';

/**
 * The chat format shared by OpenAI-compatible servers and Ollama: the system prompt is a first turn; each vendor
 * spells a turn (its tool calls and results above all) its own way.
 */
export function chatMessages<Message, Turn>(
  messages: readonly Message[],
  systemPrompt: string | undefined,
  turn: (message: Message) => Turn,
): Array<Turn | { role: 'system'; content: string }> {
  const turns = messages.map(turn);
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...turns] : turns;
}

/** Tools as OpenAI's chat completions and Ollama's /api/chat both take them. */
export function chatTools(tools: readonly ModelTool[]): Array<Record<string, unknown>> {
  return tools.map(({ name, description, inputSchema }) => ({
    type: 'function',
    function: { name, ...(description ? { description } : {}), parameters: inputSchema },
  }));
}

/**
 * A tool call's input as an object, for the vendors that take it parsed (Anthropic, Ollama, the AI SDK). An input
 * that is not a JSON object (a model's malformed call, which never ran) is given back as `{}`: its result already
 * tells the model what was wrong.
 */
export function toolInputObject(input: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(input);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Every vendor's stop reasons (OpenAI, Anthropic, Ollama, the AI SDK) mapped onto CPP's four. */
const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  length: 'length',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  content_filter: 'content-filter',
  'content-filter': 'content-filter',
  refusal: 'content-filter',
};

export function toFinishReason(vendorReason: string | null | undefined): FinishReason {
  return (vendorReason && FINISH_REASONS[vendorReason]) || 'other';
}

/** Token counts as stored on a node: absent counts are left out, and no counts at all is no usage. */
export function tokenUsage(
  inputTokens: number | null | undefined,
  outputTokens: number | null | undefined,
): TokenUsage | undefined {
  const usage: TokenUsage = {};
  if (typeof inputTokens === 'number') usage.inputTokens = inputTokens;
  if (typeof outputTokens === 'number') usage.outputTokens = outputTokens;
  return Object.keys(usage).length > 0 ? usage : undefined;
}

/** A token count as the vendors report it in their streams' usage fields. */
export const TokenCountSchema = z.number().int().nonnegative();
