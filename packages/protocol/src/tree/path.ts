import type { MessageNode } from '../node.js';
import { getNode, type ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/** The nodes from the root down to `nodeId`, both included: the branch a model is given as context. */
export function pathToRoot(graph: ThreadGraph, nodeId: string): MessageNode[] {
  return walkToRoot(graph, nodeId, (id) => getNode(graph, id));
}

/**
 * `pathToRoot` as it will be once `change` is applied to `graph`, which is left as it is: the context of an answer
 * that a planned change creates, known before the change is committed.
 */
export function pathToRootAfter(graph: ThreadGraph, change: TreeChange, nodeId: string): MessageNode[] {
  const changed = new Map(change.nodes.map((node) => [node.id, node]));
  return walkToRoot(graph, nodeId, (id) => changed.get(id) ?? getNode(graph, id));
}

function walkToRoot(
  graph: ThreadGraph,
  nodeId: string,
  nodeOf: (id: string) => MessageNode | undefined,
): MessageNode[] {
  const path: MessageNode[] = [];
  const seen = new Set<string>();
  let current = nodeOf(nodeId);
  while (current) {
    if (seen.has(current.id)) throw new Error(`cycle at ${current.id} in thread ${graph.threadId}`);
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : nodeOf(current.parentId);
  }
  return path.reverse();
}
