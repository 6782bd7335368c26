import { getNode, type ThreadGraph } from './thread-graph.js';

/**
 * Every way a graph can be inconsistent, as readable sentences; an empty list means the graph is sound. Checks:
 * one root, parent and children agree both ways, no cycles, every id resolves, the head exists, user nodes are
 * completed.
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
  if (roots.length !== 1) violations.push(`expected one root, found ${roots.length}`);
  if (graph.rootNodeId === null || roots[0] !== graph.rootNodeId)
    violations.push(`rootNodeId ${graph.rootNodeId} is not the root`);
  if (graph.activeHeadMessageId === null || !getNode(graph, graph.activeHeadMessageId)) {
    violations.push(`head ${graph.activeHeadMessageId} does not resolve`);
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

  const reachable = countReachable(graph);
  if (reachable !== ids.length)
    violations.push(`${ids.length - reachable} nodes are not reachable from the root (cycle or orphan)`);
  return violations;
}

function countReachable(graph: ThreadGraph): number {
  if (graph.rootNodeId === null || !getNode(graph, graph.rootNodeId)) return 0;
  const seen = new Set<string>();
  const stack = [graph.rootNodeId];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const childId of getNode(graph, id)?.childrenIds ?? []) stack.push(childId);
  }
  return seen.size;
}
