import type { MessageNode } from '@promethea/cpp-protocol';
import type { ModelMessage } from '../model/model-provider.js';

/**
 * The context a model is given: the branch from the root to the new prompt, never other branches. Interrupted and
 * failed assistant turns keep their partial text; an assistant turn with no text at all says nothing and is left
 * out.
 */
export function modelMessages(branch: readonly MessageNode[]): ModelMessage[] {
  return branch
    .filter((node) => node.role === 'user' || node.content.length > 0)
    .map((node) => ({ role: node.role, content: node.content }));
}
