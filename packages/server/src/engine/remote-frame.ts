import {
  applyChunk,
  applyHalted,
  applyToolCall,
  chunkPartLength,
  encodeServerFrame,
  ErrorCode,
  getNode,
  type ServerFrame,
  type StreamChunkFrame,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { applyCountedChange } from './thread-size.js';

/** What a frame from another server did to this server's copy of the thread, and what this server's subscribers get. */
export type RemoteOutcome =
  /** This copy missed something (a change, or text): reload it. */
  | { kind: 'gap' }
  /** Already known (e.g. loaded from the store after it was committed): nothing to send. */
  | { kind: 'known' }
  | { kind: 'change'; change: TreeChange }
  | { kind: 'frame'; text: string; chunk?: StreamChunkFrame['payload'] };

/**
 * Applies a frame another server sent its subscribers to this server's copy of the thread, with the offset and
 * version rules a client's mirror uses (docs/PROTOCOL.md §9.3): a patch is the change of the version after this
 * copy's, a chunk is appended from where this copy's text ends (the part already held is cut off, never doubled).
 */
export function applyRemoteFrame(graph: ThreadGraph, frame: ServerFrame, text: string): RemoteOutcome {
  switch (frame.type) {
    case 'CPP_GRAPH_PATCH': {
      const { version, rootNodeId, activeHeadMessageId, nodes, removedNodeIds } = frame.payload;
      if (version <= graph.version) return { kind: 'known' };
      if (version !== graph.version + 1) return { kind: 'gap' };
      const change: TreeChange = {
        threadId: graph.threadId,
        baseVersion: graph.version,
        version,
        rootNodeId,
        activeHeadMessageId,
        nodes: Object.values(nodes),
        ...(removedNodeIds ? { removedNodeIds } : {}),
      };
      applyCountedChange(graph, change);
      return { kind: 'change', change };
    }
    case 'CPP_STREAM_CHUNK': {
      // Text after a node's end is never passed on (§15.4) nor kept: its writer was fenced off too late, or the
      // chunk overtook nothing and is simply late.
      if (endedHere(graph, frame.payload.nodeId)) return { kind: 'known' };
      const node = getNode(graph, frame.payload.nodeId);
      const held = node ? chunkPartLength(node, frame.payload) : 0;
      const outcome = applyChunk(graph, frame.payload);
      if (outcome !== 'applied') return { kind: outcome === 'gap' ? 'gap' : 'known' };
      if (frame.payload.offset === held) return { kind: 'frame', text, chunk: frame.payload };
      const chunk = { ...frame.payload, offset: held, delta: frame.payload.delta.slice(held - frame.payload.offset) };
      return { kind: 'frame', text: encodeServerFrame('CPP_STREAM_CHUNK', chunk), chunk };
    }
    case 'CPP_TOOL_CALL':
      return applyToolCall(graph, frame.payload) === 'applied' ? { kind: 'frame', text } : { kind: 'gap' };
    case 'CPP_STREAM_HALTED':
      if (endedHere(graph, frame.payload.interruptedNodeId)) return { kind: 'known' };
      return applyHalted(graph, frame.payload) === 'applied' ? { kind: 'frame', text } : { kind: 'gap' };
    case 'CPP_STREAM_COMPLETED':
      return endedHere(graph, frame.payload.nodeId) ? { kind: 'known' } : { kind: 'frame', text };
    case 'CPP_ERROR':
      return frame.payload.code === ErrorCode.PROVIDER_ERROR &&
        frame.payload.nodeId !== undefined &&
        endedHere(graph, frame.payload.nodeId)
        ? { kind: 'known' }
        : { kind: 'frame', text };
    default:
      return { kind: 'frame', text };
  }
}

/**
 * Whether this copy has the node ended already, when a frame announcing its end arrives. The server writing it
 * sends that frame before the change that ends it, so the copy then still has it streaming, unless the copy was
 * reloaded in between (after a gap, or a recovery of a dead server's answer this server raced for) and gave its
 * subscribers the node's end in a sync: passed on after it, the frame would announce the end after its outcome.
 */
function endedHere(graph: ThreadGraph, nodeId: string): boolean {
  const node = getNode(graph, nodeId);
  return node !== undefined && node.status !== 'streaming';
}
