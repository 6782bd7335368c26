import { getNode, type ThreadGraph } from './thread-graph.js';

/**
 * Every way a graph can be inconsistent, as readable sentences; an empty list means the graph is sound. Checks:
 * at least one first prompt (a user node without a parent), the root is the first prompt of the head's branch,
 * parent and children agree both ways, no cycles, every id resolves, the head exists, user nodes are completed.
 */
export function findInvariantViolations(graph: ThreadGraph): string[] {
  const violations: string[] = [];
  const ids = Object.keys(graph.nodes);
  const roots = ids.filter((id) => graph.nodes[id]?.parentId === null);

  if (ids.length === 0) {
    if (graph.rootNodeId !== null) violations.push('empty thread has a root id');
    if (graph.activeHeadMessageId !== null) violations.push('empty thread has a head');
    return violations;
  }
  if (roots.length === 0) violations.push('no node without a parent: the thread has no first prompt');
  if (graph.activeHeadMessageId === null || !getNode(graph, graph.activeHeadMessageId)) {
    violations.push(`head ${graph.activeHeadMessageId} does not resolve`);
  } else if (graph.rootNodeId === null || !roots.includes(graph.rootNodeId)) {
    violations.push(`rootNodeId ${graph.rootNodeId} is not a first prompt`);
  } else if (!isAncestorOrSelf(graph, graph.rootNodeId, graph.activeHeadMessageId)) {
    violations.push(`rootNodeId ${graph.rootNodeId} is not the first prompt of the head's branch`);
  }

  for (const id of ids) {
    const node = graph.nodes[id]!;
    if (node.id !== id) violations.push(`node stored under ${id} has id ${node.id}`);
    if (node.role === 'user' && node.status !== 'completed') violations.push(`user node ${id} is ${node.status}`);
    if (node.parentId !== null) {
      const parent = getNode(graph, node.parentId);
      if (!parent) violations.push(`parent ${node.parentId} of ${id} does not resolve`);
      else if (parent.childrenIds.filter((childId) => childId === id).length !== 1) {
        violations.push(`parent ${node.parentId} does not list ${id} exactly once`);
      }
    }
    for (const childId of node.childrenIds) {
      const child = getNode(graph, childId);
      if (!child) violations.push(`child ${childId} of ${id} does not resolve`);
      else if (child.parentId !== id) violations.push(`child ${childId} of ${id} names parent ${child.parentId}`);
    }
  }

  const reachable = countReachable(graph, roots);
  if (reachable !== ids.length)
    violations.push(`${ids.length - reachable} nodes are not reachable from a first prompt (cycle or orphan)`);
  return violations;
}

/** Whether `nodeId` is `ancestorId` or below it; false on a cycle, which the reachability check reports. */
function isAncestorOrSelf(graph: ThreadGraph, ancestorId: string, nodeId: string): boolean {
  const seen = new Set<string>();
  for (let node = getNode(graph, nodeId); node && !seen.has(node.id); ) {
    if (node.id === ancestorId) return true;
    seen.add(node.id);
    node = node.parentId === null ? undefined : getNode(graph, node.parentId);
  }
  return false;
}

function countReachable(graph: ThreadGraph, roots: readonly string[]): number {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const childId of getNode(graph, id)?.childrenIds ?? []) stack.push(childId);
  }
  return seen.size;
}
