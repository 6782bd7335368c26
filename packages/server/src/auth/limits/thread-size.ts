import type { ThreadGraph } from '@promethea/cpp-protocol';

/** What a thread holds, as the thread limits count it. */
export interface ThreadSize {
  nodes: number;
  /** UTF-8 bytes of the nodes' text. */
  bytes: number;
}

export function threadSize(graph: ThreadGraph): ThreadSize {
  let bytes = 0;
  const nodes = Object.values(graph.nodes);
  for (const node of nodes) bytes += Buffer.byteLength(node.content);
  return { nodes: nodes.length, bytes };
}
