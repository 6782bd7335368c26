import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import { z } from 'zod';
import type { ModelMessage } from '../model-provider.js';

/** A turn in the chat format shared by OpenAI-compatible servers and Ollama: the system prompt is a first turn. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function chatMessages(messages: readonly ModelMessage[], systemPrompt: string | undefined): ChatMessage[] {
  const turns = messages.map(({ role, content }): ChatMessage => ({ role, content }));
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...turns] : turns;
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
