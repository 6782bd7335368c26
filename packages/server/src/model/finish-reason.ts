import type { FinishReason } from '@promethea/cpp-protocol';

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
