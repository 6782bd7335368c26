import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';

/**
 * A copy of a live mirror graph for React state (treat it as immutable). The client mutates its mirror in place, so React
 * could never see a change by reference; this copies it, but reuses every node of `previous` that has not
 * changed, so memoised message components re-render only for the nodes a frame touched.
 */
export function snapshotGraph(live: ThreadGraph, previous: ThreadGraph | undefined): ThreadGraph {
  const reusable = previous?.threadId === live.threadId ? previous.nodes : {};
  const nodes: Record<string, MessageNode> = {};
  for (const [id, node] of Object.entries(live.nodes)) {
    const before = Object.hasOwn(reusable, id) ? reusable[id] : undefined;
    nodes[id] = before && sameNode(before, node) ? before : copyNode(node);
  }
  return {
    threadId: live.threadId,
    rootNodeId: live.rootNodeId,
    activeHeadMessageId: live.activeHeadMessageId,
    version: live.version,
    nodes,
  };
}

function copyNode(node: MessageNode): MessageNode {
  return { ...node, childrenIds: [...node.childrenIds], ...(node.usage && { usage: { ...node.usage } }) };
}

/** Node ids, roles, parents and creation times never change; everything else may. */
function sameNode(before: MessageNode, node: MessageNode): boolean {
  return (
    before.content === node.content &&
    before.reasoning === node.reasoning &&
    before.status === node.status &&
    before.model === node.model &&
    before.usage?.inputTokens === node.usage?.inputTokens &&
    before.usage?.outputTokens === node.usage?.outputTokens &&
    // The mirror replaces a node's list of tool calls whenever one of them changes, never edits it in place.
    before.toolCalls === node.toolCalls &&
    before.childrenIds.length === node.childrenIds.length &&
    before.childrenIds.every((childId, index) => childId === node.childrenIds[index])
  );
}
