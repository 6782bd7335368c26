import { GraphDraft } from './graph-draft.js';
import { addExchange, type ExchangeInput } from './exchange.js';
import type { ThreadGraph } from './thread-graph.js';
import { cutToolCalls } from './tool-calls.js';
import { keepHalted, type HaltedAnswer } from './halted.js';
import type { TreeChange } from './tree-change.js';

export interface PivotSpliceInput extends ExchangeInput {
  interruptedNodeId: string;
  /**
   * The cut: the interrupted node's text as the clients saw it. Absent when the node was no longer streaming, in
   * which case it keeps its content and status and the prompt simply branches under it.
   */
  cutContent?: string;
  /** The interrupted node's reasoning at the cut, with `cutContent`; absent: none. */
  cutReasoning?: string;
  /** The answers streaming beside the interrupted node, halted with it, each at its cut (docs/PROTOCOL.md §30.3). */
  alsoHalted?: readonly HaltedAnswer[];
}

/**
 * Spec §4, steps 2–4 as one change: commit the interrupted node (status `interrupted`, text trimmed to the cut, its
 * tool calls cut with it), hang the user's prompt under it, and add the new assistant node under that, which becomes
 * the head.
 */
export function planPivotSplice(graph: ThreadGraph, input: PivotSpliceInput): TreeChange {
  const draft = new GraphDraft(graph);
  const interrupted = draft.get(input.interruptedNodeId);
  if (input.cutContent !== undefined)
    draft.update(input.interruptedNodeId, {
      status: 'interrupted',
      content: input.cutContent,
      reasoning: input.cutReasoning,
      toolCalls: cutToolCalls(interrupted.toolCalls ?? [], input.cutContent.length),
    });
  keepHalted(draft, input.alsoHalted);
  addExchange(draft, input.interruptedNodeId, input);
  return draft.toChange();
}
