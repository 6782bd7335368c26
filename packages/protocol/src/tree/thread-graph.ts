import type { MessageNode } from '../node.js';

/** One thread's conversation tree: the state a CPP_SYNC_GRAPH carries. */
export interface ThreadGraph {
  threadId: string;
  /** `null` while the thread has no messages. */
  rootNodeId: string | null;
  /** Where the next prompt branches from; `null` while the thread has no messages. */
  activeHeadMessageId: string | null;
  /** Incremented by every structural change (a node added, a status changed, the head moved). */
  version: number;
  nodes: Record<string, MessageNode>;
}

export function emptyGraph(threadId: string): ThreadGraph {
  return { threadId, rootNodeId: null, activeHeadMessageId: null, version: 0, nodes: {} };
}

export function getNode(graph: ThreadGraph, nodeId: string): MessageNode | undefined {
  return Object.hasOwn(graph.nodes, nodeId) ? graph.nodes[nodeId] : undefined;
}

/** The node a generation is writing, if any: a server runs at most one per thread. */
export function streamingNode(graph: ThreadGraph): MessageNode | undefined {
  return Object.values(graph.nodes).find((node) => node.status === 'streaming');
}
