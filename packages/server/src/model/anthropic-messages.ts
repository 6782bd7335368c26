import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { ModelMessage } from './model-provider.js';

/** Anthropic needs a user turn first; stands in when the branch starts with an assistant turn. */
const OPENING_TURN = '(The conversation so far follows.)';

/**
 * The branch in the Messages API's shape: roles strictly alternate, starting with the user. Consecutive turns of one
 * role (a prompt after a failed or skipped answer) are merged, and whitespace-only turns, which the API rejects,
 * are left out.
 */
export function anthropicMessages(messages: readonly ModelMessage[]): MessageParam[] {
  const turns: ModelMessage[] = [];
  for (const { role, content } of messages) {
    if (content.trim() === '') continue;
    const previous = turns.at(-1);
    if (previous?.role === role) previous.content = `${previous.content}\n\n${content}`;
    else turns.push({ role, content });
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', content: OPENING_TURN });
  return turns;
}
