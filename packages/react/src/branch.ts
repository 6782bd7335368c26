import {
  firstPrompts,
  getNode,
  pathToRoot,
  streamingNode,
  type MessageNode,
  type ThreadGraph,
} from '@promethea/cpp-protocol';

/** The node a generation is writing, if any (from the protocol package, where the server uses it too). */
export { streamingNode };

/** One message of the branch on screen, with the sibling group it belongs to (for ‹ 2/3 › at a fork). */
export interface BranchEntry {
  node: MessageNode;
  /**
   * The ids of the node and its siblings of the same role in creation order; only the node itself when there is no
   * fork.
   */
  siblingIds: readonly string[];
  /** Where the node stands among `siblingIds`. */
  siblingIndex: number;
  /**
   * The answers several models wrote side by side to the same prompt (PROTOCOL.md §30), this one among them, in
   * their order: the answers of its prompt created with it, in one change (the same `createdAt`). Empty when it was
   * written alone.
   */
  sideBySide: readonly MessageNode[];
}

/** The leaf reached from `nodeId` by always taking the most recent child: where that branch ends today. */
export function branchTip(graph: ThreadGraph, nodeId: string): string {
  let current = getNode(graph, nodeId);
  let tipId = nodeId;
  while (current && current.childrenIds.length > 0) {
    tipId = current.childrenIds.at(-1)!;
    current = getNode(graph, tipId);
  }
  return tipId;
}

/**
 * The branch a person is looking at: from the root to the head. When a generation is streaming below the head
 * (the head was anchored on its prompt, say), the branch runs on down to the streaming answer so it stays in view.
 */
export function currentBranch(graph: ThreadGraph): BranchEntry[] {
  const headId = graph.activeHeadMessageId;
  if (headId === null) return [];
  const streaming = streamingNode(graph);
  const streamingPath = streaming ? pathToRoot(graph, streaming.id) : [];
  const path = streamingPath.some((node) => node.id === headId) ? streamingPath : pathToRoot(graph, headId);
  return path.map((node) => {
    // Like with like: a prompt's versions are the prompts beside it, an answer's the answers. A prompt sent from an
    // anchored prompt sits among that prompt's answers in the tree, but is no version of any of them. A first
    // prompt's versions are the thread's first prompts: those of an edited first prompt.
    const siblingIds =
      node.parentId === null
        ? firstPrompts(graph).map((first) => first.id)
        : (getNode(graph, node.parentId)?.childrenIds ?? [node.id]).filter(
            (id) => id === node.id || getNode(graph, id)?.role === node.role,
          );
    return { node, siblingIds, siblingIndex: siblingIds.indexOf(node.id), sideBySide: sideBySideOf(graph, node) };
  });
}

/** The answers written with `node`, side by side, by several models (it among them), or none when it was alone. */
export function sideBySideOf(graph: ThreadGraph, node: MessageNode): MessageNode[] {
  if (node.role !== 'assistant' || node.parentId === null) return [];
  const together = (getNode(graph, node.parentId)?.childrenIds ?? [])
    .map((id) => getNode(graph, id))
    .filter((answer): answer is MessageNode => answer?.role === 'assistant' && answer.createdAt === node.createdAt);
  return together.length > 1 ? together : [];
}
