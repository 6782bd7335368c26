import type { CPPClient } from '@promethea/cpp-client';
import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';
import { useCallback, useMemo } from 'react';
import { branchTip, currentBranch, streamingNode, type BranchEntry } from './branch.js';

export interface Branch {
  /** The branch on screen, root first. */
  entries: BranchEntry[];
  /** The node the next prompt branches from. */
  headId: string | null;
  /** The node being generated, wherever it is in the tree. */
  streaming: MessageNode | undefined;
  /** Show the neighbouring branch at the fork above `entry` (-1 the previous, +1 the next), to its tip. */
  showSibling(entry: BranchEntry, offset: number): Promise<void>;
  /** Show the branch through `nodeId`, down to its tip (the minimap's click). */
  showBranchOf(nodeId: string): Promise<void>;
}

/**
 * The conversation as the big chat apps show it: one branch at a time, with ‹ 2/3 › at each fork. Moving to
 * another branch anchors the head at that branch's tip, so the next prompt continues what is on screen and every
 * other tab on the thread follows.
 */
export function useBranch(client: CPPClient | null, graph: ThreadGraph | undefined): Branch {
  const entries = useMemo(() => (graph ? currentBranch(graph) : []), [graph]);
  const streaming = useMemo(() => graph && streamingNode(graph), [graph]);

  const showBranchOf = useCallback(
    async (nodeId: string) => {
      if (!client || !graph) return;
      await client.anchor(branchTip(graph, nodeId), { threadId: graph.threadId });
    },
    [client, graph],
  );

  const showSibling = useCallback(
    async (entry: BranchEntry, offset: number) => {
      const siblingId = entry.siblingIds[entry.siblingIndex + offset];
      if (siblingId !== undefined) await showBranchOf(siblingId);
    },
    [showBranchOf],
  );

  return { entries, headId: graph?.activeHeadMessageId ?? null, streaming, showSibling, showBranchOf };
}
