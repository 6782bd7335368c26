import type { ImportedThread, MessageNode } from '@promethea/cpp-protocol';

/**
 * A node as one thread posts it to another: the fields every node has, and `model`, by position; the others (rare in
 * an export: tool calls, files, usage …) as an object, absent when it has none. Structured cloning of objects is
 * slow to read back: 100,000 nodes as objects took 450–570 ms of the receiving thread, as arrays 110–125 ms.
 */
type PackedNode = [
  id: string,
  parentId: string | null,
  childrenIds: string[],
  role: MessageNode['role'],
  content: string,
  status: MessageNode['status'],
  createdAt: number,
  model: string | undefined,
  rest: Partial<MessageNode> | undefined,
];

/** A thread with its graph, but for the nodes, as they are; its nodes packed. */
export interface PackedThread {
  thread: Omit<ImportedThread, 'graph'>;
  graph: Omit<ImportedThread['graph'], 'nodes'>;
  nodes: PackedNode[];
}

export function packThread({ graph, ...thread }: ImportedThread): PackedThread {
  const { nodes, ...header } = graph;
  return {
    thread,
    graph: header,
    nodes: Object.values(nodes).map(
      ({ id, parentId, childrenIds, role, content, status, createdAt, model, ...rest }) => [
        id,
        parentId,
        childrenIds,
        role,
        content,
        status,
        createdAt,
        model,
        Object.keys(rest).length > 0 ? rest : undefined,
      ],
    ),
  };
}

/** The thread `packThread` packed, equal to it. */
export function unpackThread({ thread, graph, nodes }: PackedThread): ImportedThread {
  const unpacked: Record<string, MessageNode> = {};
  for (const [id, parentId, childrenIds, role, content, status, createdAt, model, rest] of nodes) {
    const node: MessageNode = { id, parentId, childrenIds, role, content, status, createdAt, ...rest };
    if (model !== undefined) node.model = model;
    unpacked[id] = node;
  }
  return { ...thread, graph: { ...graph, nodes: unpacked } };
}
