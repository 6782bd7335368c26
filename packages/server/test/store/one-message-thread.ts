import { newMessageId, newThreadId } from '@promethea/cpp-protocol';
import type { StoredThread } from '../../src/store/conversation-store.js';

/** A thread of `ownerDid` holding one message, `text`, written at `at`: the rows a store's search ranks. */
export function oneMessageThread(ownerDid: string, text: string, at: number): StoredThread {
  const nodeId = newMessageId();
  const threadId = newThreadId();
  const node = {
    id: nodeId,
    parentId: null,
    childrenIds: [],
    role: 'user' as const,
    content: text,
    status: 'completed' as const,
    createdAt: at,
  };
  const graph = { threadId, rootNodeId: nodeId, activeHeadMessageId: nodeId, version: 0, nodes: { [nodeId]: node } };
  return { threadId, ownerDid, title: '', createdAt: at, updatedAt: at, graph };
}
