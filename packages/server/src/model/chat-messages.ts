import type { ModelMessage } from './model-provider.js';

/** A turn in the chat format shared by OpenAI-compatible servers and Ollama: the system prompt is a first turn. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function chatMessages(messages: readonly ModelMessage[], systemPrompt: string | undefined): ChatMessage[] {
  const turns = messages.map(({ role, content }): ChatMessage => ({ role, content }));
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...turns] : turns;
}
