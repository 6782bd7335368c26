import {
  findInvariantViolations,
  type GraphPatchFrame,
  type MessageNode,
  type ServerFrame,
  type StreamChunkFrame,
  type SyncGraphFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import type { StreamedText } from './pattern.js';

/**
 * The copy of every thread one connection is sent, kept from its frames as docs/PROTOCOL.md §9.3 says, checking on
 * the way the rules every frame must keep whatever the scenario: chunk offsets continue the node's text, no chunk
 * comes before the update creating its node or after its end, a halt or completion agrees with the text sent,
 * patches come in version order, versions never go back, and every update leaves a sound tree.
 */
export class ThreadCopies {
  private readonly graphs = new Map<string, ThreadGraph>();
  private readonly chunkStarts = new Map<string, number[]>();
  private readonly ended = new Set<string>();
  /** Nodes streamed to a connection that holds no copy of their thread (implicit subscription): where they reached. */
  private readonly looseEnds = new Map<string, number>();

  /** The node's text as this connection holds it. */
  streamed(nodeId: string): StreamedText | undefined {
    const node = this.findNode(nodeId);
    return node ? { text: node.content, chunkStarts: this.chunkStarts.get(nodeId) ?? [] } : undefined;
  }

  /** Applies one frame; returns the rules it breaks. */
  observe(frame: ServerFrame): string[] {
    switch (frame.type) {
      case 'CPP_SYNC_GRAPH':
        return this.sync(frame.payload);
      case 'CPP_GRAPH_PATCH':
        return this.patch(frame.payload);
      case 'CPP_STREAM_CHUNK':
        return this.chunk(frame.payload);
      case 'CPP_STREAM_HALTED': {
        const { interruptedNodeId, threadId, finalContentLength } = frame.payload;
        return this.end(interruptedNodeId, threadId, finalContentLength, frame.type, (held, final) => final <= held);
      }
      case 'CPP_STREAM_COMPLETED': {
        const { nodeId, threadId, finalContentLength } = frame.payload;
        return this.end(nodeId, threadId, finalContentLength, frame.type, (held, final) => final === held);
      }
      case 'CPP_ERROR':
        if (frame.payload.nodeId !== undefined) this.ended.add(frame.payload.nodeId);
        return [];
      case 'CPP_THREAD_DELETED':
        // The thread is gone: one opened again under its id starts again at version 0.
        this.graphs.delete(frame.payload.threadId);
        return [];
      default:
        return [];
    }
  }

  private sync(payload: SyncGraphFrame['payload']): string[] {
    const held = this.graphs.get(payload.threadId);
    const graph: ThreadGraph = { threadId: payload.threadId, rootNodeId: payload.rootNodeId, activeHeadMessageId: payload.activeHeadMessageId, version: payload.version, nodes: structuredClone(payload.nodes) };
    this.graphs.set(payload.threadId, graph);
    const violations = held && payload.version < held.version ? [`CPP_SYNC_GRAPH went back from version ${held.version} to ${payload.version}`] : [];
    return [...violations, ...this.soundness(graph, 'CPP_SYNC_GRAPH')];
  }

  private patch(payload: GraphPatchFrame['payload']): string[] {
    const graph = this.graphs.get(payload.threadId);
    if (!graph) return [`CPP_GRAPH_PATCH of thread ${payload.threadId}, of which this connection was sent no CPP_SYNC_GRAPH first`];
    if (payload.version !== graph.version + 1) return [`CPP_GRAPH_PATCH version ${payload.version} does not follow version ${graph.version}`];
    for (const [id, node] of Object.entries(payload.nodes)) graph.nodes[id] = structuredClone(node);
    for (const id of payload.removedNodeIds ?? []) delete graph.nodes[id];
    Object.assign(graph, { rootNodeId: payload.rootNodeId, activeHeadMessageId: payload.activeHeadMessageId, version: payload.version });
    return this.soundness(graph, 'CPP_GRAPH_PATCH');
  }

  private chunk(payload: StreamChunkFrame['payload']): string[] {
    const { threadId, nodeId, offset, delta } = payload;
    if (this.ended.has(nodeId)) return [`CPP_STREAM_CHUNK of node ${nodeId} after its end`];
    const graph = this.graphs.get(threadId);
    if (!graph) return this.looseChunk(nodeId, offset, delta);
    const node = graph.nodes[nodeId];
    if (!node) return [`CPP_STREAM_CHUNK of node ${nodeId} before the structural update that creates it`];
    if (node.status !== 'streaming') return [`CPP_STREAM_CHUNK of node ${nodeId}, which is ${node.status}`];
    if (offset !== node.content.length) return [`CPP_STREAM_CHUNK offset ${offset} of node ${nodeId}, whose text was ${node.content.length} code units long`];
    node.content += delta;
    this.chunkStarts.set(nodeId, [...(this.chunkStarts.get(nodeId) ?? []), offset]);
    return [];
  }

  /** Without a copy of the thread the text before the first chunk is unknown; later chunks must still continue it. */
  private looseChunk(nodeId: string, offset: number, delta: string): string[] {
    const reached = this.looseEnds.get(nodeId);
    this.looseEnds.set(nodeId, offset + delta.length);
    return reached === undefined || reached === offset ? [] : [`CPP_STREAM_CHUNK offset ${offset} of node ${nodeId}, whose previous chunk ended at ${reached}`];
  }

  private end(nodeId: string, threadId: string, finalContentLength: number, type: string, agrees: (held: number, final: number) => boolean): string[] {
    this.ended.add(nodeId);
    const node = this.graphs.get(threadId)?.nodes[nodeId];
    if (!node) return [];
    if (node.status !== 'streaming') return [`${type} of node ${nodeId}, which is ${node.status}`];
    if (!agrees(node.content.length, finalContentLength)) return [`${type} finalContentLength ${finalContentLength} of node ${nodeId}, which was sent ${node.content.length} code units`];
    node.content = node.content.slice(0, finalContentLength);
    return [];
  }

  private soundness(graph: ThreadGraph, type: string): string[] {
    const nodes = Object.values(graph.nodes);
    const streaming = nodes.filter((node) => node.status === 'streaming');
    const violations = findInvariantViolations(graph);
    if (streaming.length > 1) violations.push(`${streaming.length} nodes stream at once`);
    for (const node of streaming) if (node.role !== 'assistant' || node.childrenIds.length > 0) violations.push(`streaming node ${node.id} is not an assistant node without children`);
    return violations.map((violation) => `after ${type} of thread ${graph.threadId} version ${graph.version}: ${violation}`);
  }

  private findNode(nodeId: string): MessageNode | undefined {
    for (const graph of this.graphs.values()) if (Object.hasOwn(graph.nodes, nodeId)) return graph.nodes[nodeId];
    return undefined;
  }
}
