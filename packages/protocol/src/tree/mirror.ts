import type {
  GraphPatchFrame,
  StreamChunkFrame,
  StreamHaltedFrame,
  SyncGraphFrame,
  ToolCallFrame,
} from '../frames/server-frames.js';
import type { MessageNode } from '../node.js';
import { partText, setPartText } from './text-parts.js';
import { cutToolCalls, withToolCall } from './tool-calls.js';
import { getNode, type ThreadGraph } from './thread-graph.js';

/**
 * How a client keeps an exact copy of a thread from the server's frames. Pure functions over a graph the caller
 * owns; each returns whether the frame applied, was already known, or revealed a gap (then ask for a full sync).
 */
export type MirrorOutcome = 'applied' | 'stale' | 'gap';

export function graphFromSync(payload: SyncGraphFrame['payload']): ThreadGraph {
  return {
    threadId: payload.threadId,
    rootNodeId: payload.rootNodeId,
    activeHeadMessageId: payload.activeHeadMessageId,
    version: payload.version,
    nodes: structuredClone(payload.nodes),
  };
}

/** A patch applies on top of exactly the version before it. */
export function applyPatch(graph: ThreadGraph, payload: GraphPatchFrame['payload']): MirrorOutcome {
  if (payload.version <= graph.version) return 'stale';
  if (payload.version !== graph.version + 1) return 'gap';
  for (const [id, node] of Object.entries(payload.nodes)) graph.nodes[id] = structuredClone(node);
  for (const id of payload.removedNodeIds ?? []) delete graph.nodes[id];
  graph.rootNodeId = payload.rootNodeId;
  graph.activeHeadMessageId = payload.activeHeadMessageId;
  graph.version = payload.version;
  return 'applied';
}

/** How much of the part a chunk extends the node holds: its content, its reasoning, or its tool call's input. */
export function chunkPartLength(node: MessageNode, payload: StreamChunkFrame['payload']): number {
  const part = payload.part ?? 'content';
  if (part !== 'tool-input') return partText(node, part).length;
  return node.toolCalls?.find((call) => call.toolCallId === payload.toolCallId)?.input.length ?? 0;
}

/**
 * A chunk applies at its offset in its part (the content, the reasoning, or a tool call's input); text already held
 * (a resent chunk after a resync) is skipped, never doubled.
 */
export function applyChunk(graph: ThreadGraph, payload: StreamChunkFrame['payload']): MirrorOutcome {
  const node = getNode(graph, payload.nodeId);
  if (!node) return 'gap';
  const part = payload.part ?? 'content';
  if (part === 'tool-input') {
    const call = node.toolCalls?.find((held) => held.toolCallId === payload.toolCallId);
    if (!call) return 'gap';
    const extended = appendAt(call.input, payload.offset, payload.delta);
    if ('outcome' in extended) return extended.outcome;
    // A new list, never an edit in place: copies of the node (a React snapshot) keep the list they were given.
    node.toolCalls = withToolCall(node.toolCalls, { ...call, input: extended.text });
    return 'applied';
  }
  const extended = appendAt(partText(node, part), payload.offset, payload.delta);
  if ('outcome' in extended) return extended.outcome;
  setPartText(node, part, extended.text);
  return 'applied';
}

/** `text` extended by `delta`, which starts at `offset`: the part of it not held yet. */
function appendAt(text: string, offset: number, delta: string): { text: string } | { outcome: 'gap' | 'stale' } {
  const held = text.length;
  if (offset > held) return { outcome: 'gap' };
  if (offset + delta.length <= held) return { outcome: 'stale' };
  return { text: text + delta.slice(held - offset) };
}

/** A tool call of a streaming node began or changed: the node holds it as sent, in place of what it had. */
export function applyToolCall(graph: ThreadGraph, payload: ToolCallFrame['payload']): MirrorOutcome {
  const node = getNode(graph, payload.nodeId);
  if (!node) return 'gap';
  node.toolCalls = withToolCall(node.toolCalls, structuredClone(payload.toolCall));
  return 'applied';
}

/**
 * The cut of a halted node may be shorter than what this client was sent (another client saw less): its content and
 * its reasoning are trimmed each to its final length, and its tool calls cut as the server cuts them.
 */
export function applyHalted(graph: ThreadGraph, payload: StreamHaltedFrame['payload']): MirrorOutcome {
  const node = getNode(graph, payload.interruptedNodeId);
  if (!node) return 'gap';
  const reasoning = partText(node, 'reasoning');
  const finalReasoningLength = payload.finalReasoningLength ?? 0;
  if (node.content.length < payload.finalContentLength || reasoning.length < finalReasoningLength) return 'gap';
  node.content = node.content.slice(0, payload.finalContentLength);
  setPartText(node, 'reasoning', reasoning.slice(0, finalReasoningLength));
  const toolCalls = cutToolCalls(node.toolCalls ?? [], payload.finalContentLength);
  if (toolCalls.length > 0) node.toolCalls = toolCalls;
  else delete node.toolCalls;
  return 'applied';
}
