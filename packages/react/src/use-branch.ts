import type { CPPClient, EditOptions, RegenerateOptions } from '@promethea/cpp-client';
import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';
import { useCallback, useMemo } from 'react';
import { streamingNodes } from '@promethea/cpp-protocol';
import { branchTip, currentBranch, streamingNode, type BranchEntry } from './branch.js';

export interface Branch {
  /** The branch on screen, root first. */
  entries: BranchEntry[];
  /** The node the next prompt branches from. */
  headId: string | null;
  /** The node being generated, wherever it is in the tree (the first, when several models answer side by side). */
  streaming: MessageNode | undefined;
  /** Every node being generated: one answer, or the answers several models write side by side (PROTOCOL.md §30). */
  streamingNodes: readonly MessageNode[];
  /** Show the neighbouring branch at the fork above `entry` (-1 the previous, +1 the next), to its tip. */
  showSibling(entry: BranchEntry, offset: number): Promise<void>;
  /** Show the branch through `nodeId`, down to its tip (the minimap's click). */
  showBranchOf(nodeId: string): Promise<void>;
  /**
   * A new answer beside the answer `nodeId` (or to the prompt `nodeId`), by `model` (or one by each of `models`, side
   * by side); settles when it ends.
   */
  regenerate(nodeId: string, options?: Pick<RegenerateOptions, 'model' | 'models'>): Promise<void>;
  /** The interrupted or failed answer `nodeId` goes on, in the same node, from where it stopped; settles when it ends. */
  continueAnswer(nodeId: string): Promise<void>;
  /**
   * The prompt `nodeId` rewritten: the new text, carrying `attachments` (PROTOCOL.md §27), goes beside it and is
   * answered by `model`; settles when the answer ends.
   */
  edit(
    nodeId: string,
    userPrompt: string,
    options?: Pick<EditOptions, 'model' | 'models' | 'attachments'>,
  ): Promise<void>;
  /** Removes `nodeId` and everything under it; a head inside moves to its parent. */
  deleteBranch(nodeId: string): Promise<void>;
}

/**
 * The conversation as the big chat apps show it: one branch at a time, with ‹ 2/3 › at each fork. Moving to
 * another branch anchors the head at that branch's tip, so the next prompt continues what is on screen and every
 * other tab on the thread follows.
 */
export function useBranch(client: CPPClient | null, graph: ThreadGraph | undefined): Branch {
  const entries = useMemo(() => (graph ? currentBranch(graph) : []), [graph]);
  const streaming = useMemo(() => graph && streamingNode(graph), [graph]);
  const streamingAll = useMemo(() => (graph ? streamingNodes(graph) : []), [graph]);

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

  const threadId = graph?.threadId;
  const regenerate = useCallback(
    async (nodeId: string, { model, models }: Pick<RegenerateOptions, 'model' | 'models'> = {}) => {
      if (client && threadId) await client.regenerate({ nodeId, threadId, model, models });
    },
    [client, threadId],
  );
  const continueAnswer = useCallback(
    async (nodeId: string) => {
      if (client && threadId) await client.continue({ nodeId, threadId });
    },
    [client, threadId],
  );
  const edit = useCallback(
    async (
      nodeId: string,
      userPrompt: string,
      { model, models, attachments }: Pick<EditOptions, 'model' | 'models' | 'attachments'> = {},
    ) => {
      if (client && threadId) await client.edit({ nodeId, userPrompt, threadId, model, models, attachments });
    },
    [client, threadId],
  );
  const deleteBranch = useCallback(
    async (nodeId: string) => {
      if (client && threadId) await client.deleteBranch(nodeId, { threadId });
    },
    [client, threadId],
  );

  return {
    entries,
    headId: graph?.activeHeadMessageId ?? null,
    streaming,
    streamingNodes: streamingAll,
    showSibling,
    showBranchOf,
    regenerate,
    continueAnswer,
    edit,
    deleteBranch,
  };
}
