import {
  applyChange,
  applyChunk,
  applyHalted,
  encodeServerFrame,
  getNode,
  partText,
  type ServerFrame,
  type StreamChunkFrame,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';

/** What a frame from another node did to this node's copy of the thread, and what this node's subscribers get. */
export type RemoteOutcome =
  /** This copy missed something (a change, or text): reload it. */
  | { kind: 'gap' }
  /** Already known (e.g. loaded from the store after it was committed): nothing to send. */
  | { kind: 'known' }
  | { kind: 'change'; change: TreeChange }
  | { kind: 'frame'; text: string; chunk?: StreamChunkFrame['payload'] };

/**
 * Applies a frame another node sent its subscribers to this node's copy of the thread, with the offset and
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
      applyChange(graph, change);
      return { kind: 'change', change };
    }
    case 'CPP_STREAM_CHUNK': {
      const node = getNode(graph, frame.payload.nodeId);
      const held = node ? partText(node, frame.payload.part ?? 'content').length : 0;
      const outcome = applyChunk(graph, frame.payload);
      if (outcome !== 'applied') return { kind: outcome === 'gap' ? 'gap' : 'known' };
      if (frame.payload.offset === held) return { kind: 'frame', text, chunk: frame.payload };
      const chunk = { ...frame.payload, offset: held, delta: frame.payload.delta.slice(held - frame.payload.offset) };
      return { kind: 'frame', text: encodeServerFrame('CPP_STREAM_CHUNK', chunk), chunk };
    }
    case 'CPP_STREAM_HALTED': {
      const node = getNode(graph, frame.payload.interruptedNodeId);
      // A halt that reaches a copy whose node has ended already came after a reload of the thread (this node, say,
      // also tried to recover a dead node's answer), which gave the subscribers the node's end in a sync: passed
      // on, it would tell them of the halt after its outcome.
      if (node && node.status !== 'streaming') return { kind: 'known' };
      return applyHalted(graph, frame.payload) === 'applied' ? { kind: 'frame', text } : { kind: 'gap' };
    }
    default:
      return { kind: 'frame', text };
  }
}
