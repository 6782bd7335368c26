import type { MessageNode, TokenUsage } from '../node.js';
import type { ToolCall } from './tool-calls.js';
import { GraphDraft } from './graph-draft.js';
import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

export interface FinishInput {
  nodeId: string;
  status: Exclude<MessageNode['status'], 'streaming'>;
  content: string;
  /** The node's final reasoning; absent: none. */
  reasoning?: string;
  usage?: TokenUsage;
  /** The node's final tool calls; absent: the calls it has are kept. */
  toolCalls?: ToolCall[];
}

/** Ends a streaming node: completed, interrupted (stopped or halted) or failed, with its final text and reasoning. */
export function planFinish(graph: ThreadGraph, input: FinishInput): TreeChange {
  const draft = new GraphDraft(graph);
  const node = draft.get(input.nodeId);
  if (node.status !== 'streaming') throw new Error(`node ${input.nodeId} is ${node.status}, not streaming`);
  const { status, content, reasoning, usage, toolCalls } = input;
  draft.update(input.nodeId, {
    status,
    content,
    reasoning,
    ...(usage ? { usage } : {}),
    ...(toolCalls ? { toolCalls } : {}),
  });
  return draft.toChange();
}
