import type { MessageNode, TokenUsage } from '../node.js';
import { GraphDraft } from './graph-draft.js';
import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

export interface FinishInput {
  nodeId: string;
  status: Exclude<MessageNode['status'], 'streaming'>;
  content: string;
  usage?: TokenUsage;
}

/** Ends a streaming node: completed, interrupted (stopped or halted) or failed, with its final text. */
export function planFinish(graph: ThreadGraph, input: FinishInput): TreeChange {
  const draft = new GraphDraft(graph);
  const node = draft.get(input.nodeId);
  if (node.status !== 'streaming') throw new Error(`node ${input.nodeId} is ${node.status}, not streaming`);
  draft.update(input.nodeId, input.usage ? { status: input.status, content: input.content, usage: input.usage } : { status: input.status, content: input.content });
  return draft.toChange();
}
