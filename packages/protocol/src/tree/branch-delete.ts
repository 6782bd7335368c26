import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import { GraphDraft } from './graph-draft.js';
import { getNode, type ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/**
 * Removes a node and its subtree. The head, when it was inside, moves to the node's parent. Refused for the root
 * (a thread has exactly one while it has nodes: it goes only with the thread) and while any removed node streams.
 */
export function planBranchDelete(graph: ThreadGraph, nodeId: string): TreeChange {
  const draft = new GraphDraft(graph);
  const node = draft.get(nodeId);
  if (node.parentId === null)
    throw new CPPError(
      ErrorCode.INVALID_NODE,
      `node ${nodeId} is the root of thread ${graph.threadId}; delete the thread instead`,
    );
  const removed = draft.removeSubtree(nodeId);
  const streaming = removed.find((id) => getNode(graph, id)?.status === 'streaming');
  if (streaming !== undefined)
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streaming} is streaming in the branch of ${nodeId}; stop it first`,
    );
  if (draft.head !== null && removed.includes(draft.head)) draft.setHead(node.parentId);
  return draft.toChange();
}
