import { type MessageNode, pathToRoot, type ThreadGraph } from '@promethea/cpp-protocol';
import type { UIMessage } from 'ai';
import { startsStep, toolPartOf } from './tool-parts.js';

/**
 * The thread's active branch, from its first prompt to its head, as `useChat`'s `messages`: each node one message
 * whose id is the node's id, with its reasoning (if any) as a reasoning part, its text as text parts and its tool
 * calls as tool parts where the model made them, a `step-start` before each model call after the first, as the
 * transport streams them. Give it to `useChat({ messages })` when a page opens a thread that has history (after a
 * reload, say), so that regenerating and editing name nodes the server knows.
 */
export function uiMessagesFromThread(graph: ThreadGraph): UIMessage[] {
  if (graph.activeHeadMessageId === null) return [];
  return pathToRoot(graph, graph.activeHeadMessageId).map((node) => ({
    id: node.id,
    role: node.role,
    parts: partsOf(node),
  }));
}

function partsOf(node: MessageNode): UIMessage['parts'] {
  const parts: UIMessage['parts'] = node.reasoning === undefined ? [] : [{ type: 'reasoning', text: node.reasoning }];
  const calls = node.toolCalls ?? [];
  if (calls.length === 0) return [...parts, { type: 'text', text: node.content }];
  let shown = 0;
  let step = 0;
  const made = new Set<string>();
  const text = (end: number) => {
    if (end <= shown) return;
    if (startsStep(calls, step, (call) => made.has(call.toolCallId))) {
      parts.push({ type: 'step-start' });
      step += 1;
    }
    parts.push({ type: 'text', text: node.content.slice(shown, end) });
    shown = end;
  };
  for (const call of calls) {
    text(call.offset);
    made.add(call.toolCallId);
    if (call.step > step) {
      parts.push({ type: 'step-start' });
      step = call.step;
    }
    parts.push(toolPartOf(call));
  }
  text(node.content.length);
  return parts;
}
