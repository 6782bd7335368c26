import { nodesInTreeOrder, type MessageNode, type ThreadGraph, type TreeChange } from '@promethea/cpp-protocol';
import type { StoredThread } from './conversation-store.js';

/**
 * A node as a store keeps it: without `childrenIds`. Children are derived from `parentId` and the order in which
 * nodes were first committed, so the parent and child sides of an edge can never disagree in storage.
 */
export type NodeRecord = Omit<MessageNode, 'childrenIds'>;

/** The graph's own fields, beside its nodes. */
export type GraphHeader = Omit<ThreadGraph, 'nodes'>;

export function toNodeRecord(node: MessageNode): NodeRecord {
  const { childrenIds: _derived, ...record } = node;
  return record;
}

/**
 * The graph of `nodes`, read in commit order with empty `childrenIds`: that order becomes the order of every
 * `childrenIds`. The nodes are the graph's own, not copied: a store reading a thread of 10,000 nodes makes each once.
 */
export function assembleGraph(header: GraphHeader, nodes: readonly MessageNode[]): ThreadGraph {
  const byId: Record<string, MessageNode> = {};
  for (const node of nodes) byId[node.id] = node;
  for (const node of nodes) {
    if (node.parentId !== null) byId[node.parentId]?.childrenIds.push(node.id);
  }
  // Written out, not spread: past ~20 graphs V8 gave each spread copy a hidden class of its own (~260 bytes more
  // for every thread loaded).
  const { threadId, rootNodeId, activeHeadMessageId, version } = header;
  return { threadId, rootNodeId, activeHeadMessageId, version, nodes: byId };
}

/** An imported thread's graph as the change that writes it into its new, empty thread: version 0 to 1. */
export function importChange(thread: StoredThread): TreeChange {
  const { rootNodeId, activeHeadMessageId } = thread.graph;
  return {
    threadId: thread.threadId,
    baseVersion: 0,
    version: 1,
    rootNodeId,
    activeHeadMessageId,
    nodes: nodesInTreeOrder(thread.graph),
  };
}
