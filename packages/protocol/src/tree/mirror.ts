import type { GraphPatchFrame, StreamChunkFrame, StreamHaltedFrame, SyncGraphFrame } from '../frames/server-frames.js';
import { partText, setPartText } from './text-parts.js';
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

/**
 * A chunk applies at its offset in its part (the content, or the reasoning); text already held (a resent chunk after
 * a resync) is skipped, never doubled.
 */
export function applyChunk(graph: ThreadGraph, payload: StreamChunkFrame['payload']): MirrorOutcome {
  const node = getNode(graph, payload.nodeId);
  if (!node) return 'gap';
  const part = payload.part ?? 'content';
  const text = partText(node, part);
  const held = text.length;
  if (payload.offset > held) return 'gap';
  const end = payload.offset + payload.delta.length;
  if (end <= held) return 'stale';
  setPartText(node, part, text + payload.delta.slice(held - payload.offset));
  return 'applied';
}

/**
 * The cut of a halted node may be shorter than what this client was sent (another client saw less): its content and
 * its reasoning are trimmed each to its final length.
 */
export function applyHalted(graph: ThreadGraph, payload: StreamHaltedFrame['payload']): MirrorOutcome {
  const node = getNode(graph, payload.interruptedNodeId);
  if (!node) return 'gap';
  const reasoning = partText(node, 'reasoning');
  const finalReasoningLength = payload.finalReasoningLength ?? 0;
  if (node.content.length < payload.finalContentLength || reasoning.length < finalReasoningLength) return 'gap';
  node.content = node.content.slice(0, payload.finalContentLength);
  setPartText(node, 'reasoning', reasoning.slice(0, finalReasoningLength));
  return 'applied';
}
