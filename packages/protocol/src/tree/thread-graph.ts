import type { MessageNode } from '../node.js';

/** One thread's conversation tree: the state a CPP_SYNC_GRAPH carries. */
export interface ThreadGraph {
  threadId: string;
  /**
   * The first node of the active branch: the first prompt whose tree holds the head (a thread may have several
   * first prompts, versions of one another, `firstPrompts`). `null` while the thread has no messages.
   */
  rootNodeId: string | null;
  /** Where the next prompt branches from; `null` while the thread has no messages. */
  activeHeadMessageId: string | null;
  /** Incremented by every structural change (a node added, a status changed, the head moved). */
  version: number;
  nodes: Record<string, MessageNode>;
}

/**
 * The thread's first prompts: the nodes without a parent, siblings of one another (an edit of the first prompt adds
 * one, docs/PROTOCOL.md §24.2), in the order they were written — by `createdAt`, ties by id — the order a sibling
 * switcher shows them in, as `childrenIds` orders the other siblings.
 */
export function firstPrompts(graph: ThreadGraph): MessageNode[] {
  const tops: MessageNode[] = [];
  for (const id in graph.nodes) {
    const node = graph.nodes[id]!;
    if (node.parentId === null) tops.push(node);
  }
  return tops.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The first node of the branch that holds `nodeId`: its ancestor without a parent (itself, when it has none). */
export function rootOf(graph: ThreadGraph, nodeId: string): MessageNode | undefined {
  return topOf(nodeId, (id) => getNode(graph, id));
}

/** `rootOf` over any way of finding a node by id (a draft's, or a graph's). */
export function topOf(nodeId: string, nodeOf: (id: string) => MessageNode | undefined): MessageNode | undefined {
  let node = nodeOf(nodeId);
  const seen = new Set<string>();
  while (node && node.parentId !== null) {
    if (seen.has(node.id)) throw new Error(`cycle at ${node.id}`);
    seen.add(node.id);
    node = nodeOf(node.parentId);
  }
  return node;
}

export function emptyGraph(threadId: string): ThreadGraph {
  return { threadId, rootNodeId: null, activeHeadMessageId: null, version: 0, nodes: {} };
}

export function getNode(graph: ThreadGraph, nodeId: string): MessageNode | undefined {
  return Object.hasOwn(graph.nodes, nodeId) ? graph.nodes[nodeId] : undefined;
}

/**
 * Which node streamed when a graph's nodes and version were last scanned. A node starts or stops streaming only by a
 * structural change, which sets a new version, or by a reload, which replaces the nodes: scanning a thread of
 * thousands of nodes on every sync and operation took a fifth of a busy server's time. A change applied with
 * `applyChange` carries the scan to its version (`carryScan`), so that a pivot does not scan a long thread again.
 */
const lastScan = new WeakMap<
  ThreadGraph,
  { nodes: ThreadGraph['nodes']; version: number; nodeId: string | undefined }
>();

/**
 * A node a generation is writing, if any: the thread's one answer, or the first of the answers of one prompt that
 * several models write side by side (docs/PROTOCOL.md §30), which `streamingNodes` lists.
 */
export function streamingNode(graph: ThreadGraph): MessageNode | undefined {
  const scan = lastScan.get(graph);
  if (scan && scan.nodes === graph.nodes && scan.version === graph.version) {
    if (scan.nodeId === undefined) return undefined;
    const node = getNode(graph, scan.nodeId);
    if (node?.status === 'streaming') return node;
  }
  const node = findStreaming(graph.nodes);
  lastScan.set(graph, { nodes: graph.nodes, version: graph.version, nodeId: node?.id });
  return node;
}

/** Every node a generation is writing: one answer, or the side-by-side answers of one prompt (docs/PROTOCOL.md §30). */
export function streamingNodes(graph: ThreadGraph): MessageNode[] {
  const first = streamingNode(graph);
  if (!first) return [];
  const parent = first.parentId === null ? undefined : getNode(graph, first.parentId);
  // Answers streaming side by side are siblings: their user node lists them all, so no walk of the thread is needed.
  const siblings = (parent?.childrenIds ?? [first.id]).map((id) => getNode(graph, id));
  return siblings.filter((node): node is MessageNode => node?.status === 'streaming');
}

/**
 * `for…in` rather than `Object.values(…).find`: a thread's nodes are keyed by random ids, an object V8 keeps as a
 * dictionary, whose values it copies into a new array 3–4× slower than it walks the keys (10,000 nodes: 4–7 ms
 * against 1.3–2 ms here, on every pivot and prompt, whose new version the scan follows).
 */
function findStreaming(nodes: ThreadGraph['nodes']): MessageNode | undefined {
  for (const id in nodes) {
    const node = nodes[id]!;
    if (node.status === 'streaming') return node;
  }
  return undefined;
}

/**
 * After `applyChange`: the scan of the version the change was planned on holds for the change's version, with the
 * nodes the change carries, since a change carries every node whose status it sets. A scan of another version, or
 * a change that starts a node streaming while another still does, leaves the next `streamingNode` to scan again.
 */
export function carryScan(
  graph: ThreadGraph,
  change: { baseVersion: number; version: number; nodes: readonly MessageNode[]; removedNodeIds?: readonly string[] },
): void {
  const scan = lastScan.get(graph);
  if (!scan || scan.nodes !== graph.nodes || scan.version !== change.baseVersion) return;
  const streaming = change.nodes.filter((node) => node.status === 'streaming').map((node) => node.id);
  const { nodeId } = scan;
  if (
    nodeId !== undefined &&
    !change.nodes.some((node) => node.id === nodeId) &&
    !change.removedNodeIds?.includes(nodeId)
  )
    streaming.push(nodeId);
  // Two streaming nodes: which one a scan finds first is the scan's to say.
  if (streaming.length > 1) lastScan.delete(graph);
  else lastScan.set(graph, { nodes: graph.nodes, version: change.version, nodeId: streaming[0] });
}
