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

/** Rebuilds a graph from its records, given in commit order: that order becomes the order of every `childrenIds`. */
export function assembleGraph(header: GraphHeader, records: Iterable<NodeRecord>): ThreadGraph {
  const nodes: Record<string, MessageNode> = {};
  const ordered: NodeRecord[] = [];
  for (const record of records) {
    nodes[record.id] = { ...record, childrenIds: [] };
    ordered.push(record);
  }
  for (const record of ordered) {
    if (record.parentId !== null) nodes[record.parentId]?.childrenIds.push(record.id);
  }
  return { ...header, nodes };
}

/** An imported thread's graph as the change that writes it into its new, empty thread: version 0 to 1. */
export function importChange(thread: StoredThread): TreeChange {
  const { rootNodeId, activeHeadMessageId } = thread.graph;
  return { threadId: thread.threadId, baseVersion: 0, version: 1, rootNodeId, activeHeadMessageId, nodes: nodesInTreeOrder(thread.graph) };
}
