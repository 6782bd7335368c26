import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/** A rename: a new version of the thread that changes no node and leaves the root and the head where they are. */
export function planRename(graph: ThreadGraph): TreeChange {
  const { threadId, version, rootNodeId, activeHeadMessageId } = graph;
  return { threadId, baseVersion: version, version: version + 1, rootNodeId, activeHeadMessageId, nodes: [] };
}
