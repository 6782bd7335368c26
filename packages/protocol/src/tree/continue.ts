import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import type { MessageNode } from '../node.js';
import { GraphDraft } from './graph-draft.js';
import { getNode, type ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

export interface ContinueInput {
  nodeId: string;
  /** The model that writes the continuation, recorded on the node: the last model to have written it. */
  model?: string;
}

/**
 * An interrupted or failed answer streams again: the same node, its text kept and continued from where it ends.
 * The head moves to it, as to any answer that starts.
 */
export function planContinue(graph: ThreadGraph, input: ContinueInput): TreeChange {
  const draft = new GraphDraft(graph);
  continuedAnswer(graph, input.nodeId);
  draft.update(
    input.nodeId,
    input.model === undefined ? { status: 'streaming' } : { status: 'streaming', model: input.model },
  );
  draft.setHead(input.nodeId);
  return draft.toChange();
}

/**
 * The answer a continue names: NOT_FOUND when the thread has no such node; INVALID_NODE unless it is an assistant
 * node that is `interrupted` or `failed` and has no children. A child (a pivot's branch under the interrupted
 * answer) was written in reply to the text as it stopped: appending to that text would change, after the fact,
 * what the branch under it answered.
 */
export function continuedAnswer(graph: ThreadGraph, nodeId: string): MessageNode {
  const node = getNode(graph, nodeId);
  if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `node ${nodeId} is not in thread ${graph.threadId}`);
  if (node.role !== 'assistant' || (node.status !== 'interrupted' && node.status !== 'failed')) {
    throw new CPPError(
      ErrorCode.INVALID_NODE,
      `node ${nodeId} is a ${node.status} ${node.role} node; only an interrupted or failed answer is continued`,
    );
  }
  if (node.childrenIds.length > 0) {
    throw new CPPError(
      ErrorCode.INVALID_NODE,
      `node ${nodeId} has a branch under it, which answered its text as it stopped; regenerate or pivot instead`,
    );
  }
  return node;
}
