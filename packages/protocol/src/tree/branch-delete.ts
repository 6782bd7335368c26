import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import { GraphDraft } from './graph-draft.js';
import { firstPrompts, getNode, type ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/**
 * Removes a node and its subtree. The head, when it was inside, moves to the node's parent; for a first prompt,
 * which has none, to the end of the newest branch of the first prompt before it (after it, when it was the first).
 * Refused for a thread's only first prompt (it goes only with the thread) and while any removed node streams.
 */
export function planBranchDelete(graph: ThreadGraph, nodeId: string): TreeChange {
  const draft = new GraphDraft(graph);
  const node = draft.get(nodeId);
  const siblings = node.parentId === null ? firstPrompts(graph) : [];
  if (node.parentId === null && siblings.length === 1)
    throw new CPPError(
      ErrorCode.INVALID_NODE,
      `node ${nodeId} is the only first prompt of thread ${graph.threadId}; delete the thread instead`,
    );
  const removed = draft.removeSubtree(nodeId);
  const streaming = removed.find((id) => getNode(graph, id)?.status === 'streaming');
  if (streaming !== undefined)
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streaming} is streaming in the branch of ${nodeId}; stop it first`,
    );
  if (draft.head !== null && removed.includes(draft.head)) {
    if (node.parentId !== null) draft.setHead(node.parentId);
    else {
      const index = siblings.findIndex((sibling) => sibling.id === nodeId);
      const neighbour = siblings[index === 0 ? 1 : index - 1]!;
      draft.setHead(newestLeaf(draft, neighbour.id));
    }
  }
  return draft.toChange();
}

/** The end of the branch that follows the last child at every step: the newest answer under `nodeId`. */
function newestLeaf(draft: GraphDraft, nodeId: string): string {
  let node = draft.get(nodeId);
  while (node.childrenIds.length > 0) node = draft.get(node.childrenIds.at(-1)!);
  return node.id;
}
