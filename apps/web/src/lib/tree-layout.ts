import { firstPrompts, getNode, type ThreadGraph } from '@promethea/cpp-protocol';

export interface PlacedNode {
  id: string;
  /** Distance from the root: the row. */
  depth: number;
  /** The column: a branch continues straight down from its first child; later children open new columns. */
  column: number;
  parentId: string | null;
}

export interface TreeLayout {
  nodes: PlacedNode[];
  columns: number;
  rows: number;
}

/**
 * Places a thread's tree on a grid the way a git history graph does, so the first line of the conversation is
 * one straight column and every fork steps to the right. Iterative, because a long chat is a deep tree.
 */
export function layoutTree(graph: ThreadGraph): TreeLayout {
  const nodes: PlacedNode[] = [];
  let columns = 0;
  let rows = 0;
  // Depth first, first child last on the stack so it comes next: by the time a later child is reached, the first
  // child's whole subtree has taken its columns, and the later child opens the next free one.
  // The versions of an edited first prompt are placed as siblings are: the first in column 0, the later ones right.
  const [firstId, ...laterIds] = firstPrompts(graph).map((node) => node.id);
  const stack: Array<{ id: string; depth: number; column: number | 'next free' }> = laterIds
    .reverse()
    .map((id) => ({ id, depth: 0, column: 'next free' as const }));
  if (firstId !== undefined) stack.push({ id: firstId, depth: 0, column: 0 });
  while (stack.length > 0) {
    const pending = stack.pop()!;
    const node = getNode(graph, pending.id);
    if (!node) continue;
    const column = pending.column === 'next free' ? columns : pending.column;
    nodes.push({ id: node.id, depth: pending.depth, column, parentId: node.parentId });
    columns = Math.max(columns, column + 1);
    rows = Math.max(rows, pending.depth + 1);
    const [firstChildId, ...laterChildIds] = node.childrenIds;
    for (const childId of laterChildIds.reverse())
      stack.push({ id: childId, depth: pending.depth + 1, column: 'next free' });
    if (firstChildId !== undefined) stack.push({ id: firstChildId, depth: pending.depth + 1, column });
  }
  return { nodes, columns, rows };
}
