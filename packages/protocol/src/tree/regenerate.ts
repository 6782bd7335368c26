import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import { addAnswer, type AnswerInput } from './exchange.js';
import { GraphDraft } from './graph-draft.js';
import type { MessageNode } from '../node.js';
import { getNode, type ThreadGraph } from './thread-graph.js';
import { keepHalted, type HaltedAnswer } from './halted.js';
import type { TreeChange } from './tree-change.js';

export interface RegenerateInput extends AnswerInput {
  userNodeId: string;
  /** The answers of the user node that were streaming, halted: their text as the clients saw it. */
  halted?: readonly HaltedAnswer[];
}

/**
 * A new answer to a user node (or one per model, side by side), appended after its earlier answers, which stay: the
 * halted ones (if any) become `interrupted` at their cut in the same change. The new answer streams and becomes the
 * head.
 */
export function planRegenerate(graph: ThreadGraph, input: RegenerateInput): TreeChange {
  const draft = new GraphDraft(graph);
  const userNode = regeneratedPrompt(graph, input.userNodeId);
  keepHalted(draft, input.halted);
  addAnswer(draft, userNode.id, input);
  return draft.toChange();
}

/** The user node a regenerate answers again: NOT_FOUND when the thread has no such node, INVALID_NODE for an answer. */
export function regeneratedPrompt(graph: ThreadGraph, nodeId: string): MessageNode {
  const node = getNode(graph, nodeId);
  if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `node ${nodeId} is not in thread ${graph.threadId}`);
  if (node.role !== 'user')
    throw new CPPError(
      ErrorCode.INVALID_NODE,
      `node ${nodeId} is an answer; regenerate names the user node whose answer to write again`,
    );
  return node;
}
