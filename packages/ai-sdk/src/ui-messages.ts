import { pathToRoot, type ThreadGraph } from '@promethea/cpp-protocol';
import type { UIMessage } from 'ai';

/**
 * The thread's active branch, from its first prompt to its head, as `useChat`'s `messages`: each node one message
 * whose id is the node's id, with its reasoning (if any) as a reasoning part and its text as a text part. Give it to `useChat({ messages })` when a page opens a
 * thread that has history (after a reload, say), so that regenerating and editing name nodes the server knows.
 */
export function uiMessagesFromThread(graph: ThreadGraph): UIMessage[] {
  if (graph.activeHeadMessageId === null) return [];
  return pathToRoot(graph, graph.activeHeadMessageId).map((node) => ({
    id: node.id,
    role: node.role,
    parts: [
      ...(node.reasoning === undefined ? [] : [{ type: 'reasoning' as const, text: node.reasoning }]),
      { type: 'text', text: node.content },
    ],
  }));
}
