import type { MessageNode } from '../node.js';
import { carryScan, type ThreadGraph } from './thread-graph.js';

/**
 * One structural change of a thread, as planned by the tree operations and committed by a store in one
 * transaction. `nodes` are the full new values of every node added or modified (a parent whose `childrenIds` grew
 * is included). It is exactly what a CPP_GRAPH_PATCH carries.
 */
export interface TreeChange {
  threadId: string;
  /** The version the change was planned against; a store refuses it when the thread has moved on. */
  baseVersion: number;
  version: number;
  rootNodeId: string | null;
  activeHeadMessageId: string | null;
  nodes: MessageNode[];
  /** The ids of the nodes the change removes (a deleted branch); absent when it removes none. */
  removedNodeIds?: string[];
}

/** Applies a planned change in place. The change must have been planned against this graph's current version. */
export function applyChange(graph: ThreadGraph, change: TreeChange): void {
  if (graph.threadId !== change.threadId || graph.version !== change.baseVersion) {
    throw new Error(
      `change for ${change.threadId}@${change.baseVersion} applied to ${graph.threadId}@${graph.version}`,
    );
  }
  for (const node of change.nodes) graph.nodes[node.id] = node;
  for (const nodeId of change.removedNodeIds ?? []) delete graph.nodes[nodeId];
  graph.rootNodeId = change.rootNodeId;
  graph.activeHeadMessageId = change.activeHeadMessageId;
  graph.version = change.version;
  carryScan(graph, change);
}
