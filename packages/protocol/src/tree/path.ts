import type { MessageNode } from '../node.js';
import { getNode, type ThreadGraph } from './thread-graph.js';

/** The nodes from the root down to `nodeId`, both included: the branch a model is given as context. */
export function pathToRoot(graph: ThreadGraph, nodeId: string): MessageNode[] {
  const path: MessageNode[] = [];
  const seen = new Set<string>();
  let current = getNode(graph, nodeId);
  while (current) {
    if (seen.has(current.id)) throw new Error(`cycle at ${current.id} in thread ${graph.threadId}`);
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : getNode(graph, current.parentId);
  }
  return path.reverse();
}
