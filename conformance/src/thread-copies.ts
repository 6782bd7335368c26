import {
  TEXT_PARTS,
  applyChunk,
  chunkPartLength,
  findInvariantViolations,
  withToolCall,
  partText,
  setPartText,
  type GraphPatchFrame,
  type MessageNode,
  type ServerFrame,
  type StreamChunkFrame,
  type StreamHaltedFrame,
  type SyncGraphFrame,
  type TextPart,
  type ThreadGraph,
  type ToolCallFrame,
  MODELS_PER_PROMPT_MAX,
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
  /** Where each chunk of a node's part began since the node last began streaming, keyed `nodeId part`. */
  private readonly chunkStarts = new Map<string, number[]>();
  private readonly ended = new Set<string>();
  /** Nodes streamed to a connection that holds no copy of their thread (implicit subscription): where they reached. */
  private readonly looseEnds = new Map<string, number>();

  /** The node's text (or reasoning) as this connection holds it. */
  streamed(nodeId: string, part: TextPart = 'content'): StreamedText | undefined {
    const node = this.findNode(nodeId);
    return node
      ? { text: partText(node, part), chunkStarts: this.chunkStarts.get(`${nodeId} ${part}`) ?? [] }
      : undefined;
  }

  /** Applies one frame; returns the rules it breaks. */
  observe(frame: ServerFrame): string[] {
    switch (frame.type) {
      case 'CPP_SYNC_GRAPH':
        return this.sync(frame.payload);
      case 'CPP_GRAPH_PATCH':
        return this.patch(frame.payload);
      case 'CPP_STREAM_CHUNK':
        return frame.payload.part === 'tool-input' ? this.toolInput(frame.payload) : this.chunk(frame.payload);
      case 'CPP_TOOL_CALL':
        return this.toolCall(frame.payload);
      case 'CPP_STREAM_HALTED':
        return [
          ...this.end(
            frame.payload.interruptedNodeId,
            frame.payload.threadId,
            frame.payload.finalContentLength,
            frame.type,
            (held, final) => final <= held,
          ),
          ...this.cutReasoning(frame.payload),
        ];
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
    const graph: ThreadGraph = {
      threadId: payload.threadId,
      rootNodeId: payload.rootNodeId,
      activeHeadMessageId: payload.activeHeadMessageId,
      version: payload.version,
      nodes: structuredClone(payload.nodes),
    };
    for (const node of Object.values(graph.nodes)) this.restartIfStreamingAgain(held?.nodes[node.id], node);
    this.graphs.set(payload.threadId, graph);
    const violations =
      held && payload.version < held.version
        ? [`CPP_SYNC_GRAPH went back from version ${held.version} to ${payload.version}`]
        : [];
    return [...violations, ...this.soundness(graph, 'CPP_SYNC_GRAPH')];
  }

  private patch(payload: GraphPatchFrame['payload']): string[] {
    const graph = this.graphs.get(payload.threadId);
    if (!graph)
      return [
        `CPP_GRAPH_PATCH of thread ${payload.threadId}, of which this connection was sent no CPP_SYNC_GRAPH first`,
      ];
    if (payload.version !== graph.version + 1)
      return [`CPP_GRAPH_PATCH version ${payload.version} does not follow version ${graph.version}`];
    for (const [id, node] of Object.entries(payload.nodes)) {
      this.restartIfStreamingAgain(graph.nodes[id], node);
      graph.nodes[id] = structuredClone(node);
    }
    for (const id of payload.removedNodeIds ?? []) delete graph.nodes[id];
    Object.assign(graph, {
      rootNodeId: payload.rootNodeId,
      activeHeadMessageId: payload.activeHeadMessageId,
      version: payload.version,
    });
    return this.soundness(graph, 'CPP_GRAPH_PATCH');
  }

  /**
   * A node that a structural update sets streaming again (CPP_CONTINUE, docs/PROTOCOL.md §24.4) is no longer ended,
   * and its chunk starts count from its new stream.
   */
  private restartIfStreamingAgain(before: MessageNode | undefined, after: MessageNode): void {
    if (after.status !== 'streaming' || before?.status === 'streaming') return;
    this.ended.delete(after.id);
    for (const part of TEXT_PARTS) this.chunkStarts.delete(`${after.id} ${part}`);
  }

  /** A tool call of a streaming node, announced before its input streams (docs/PROTOCOL.md §26.3). */
  private toolCall(payload: ToolCallFrame['payload']): string[] {
    const { threadId, nodeId, toolCall } = payload;
    if (this.ended.has(nodeId)) return [`CPP_TOOL_CALL of node ${nodeId} after its end`];
    const node = this.graphs.get(threadId)?.nodes[nodeId];
    if (!node) return [];
    if (node.status !== 'streaming') return [`CPP_TOOL_CALL of node ${nodeId}, which is ${node.status}`];
    if (toolCall.offset > node.content.length)
      return [
        `CPP_TOOL_CALL at offset ${toolCall.offset} of node ${nodeId}, whose text was ${node.content.length} long`,
      ];
    node.toolCalls = withToolCall(node.toolCalls, toolCall);
    return [];
  }

  /** A piece of a tool call's input: after the CPP_TOOL_CALL announcing the call, continuing its input. */
  private toolInput(payload: StreamChunkFrame['payload']): string[] {
    const { threadId, nodeId, offset, toolCallId } = payload;
    if (this.ended.has(nodeId)) return [`CPP_STREAM_CHUNK of node ${nodeId} after its end`];
    const graph = this.graphs.get(threadId);
    const node = graph?.nodes[nodeId];
    if (!graph || !node) return [];
    const call = node.toolCalls?.find((held) => held.toolCallId === toolCallId);
    if (!call) return [`tool-input CPP_STREAM_CHUNK of call ${toolCallId}, before the CPP_TOOL_CALL announcing it`];
    const held = chunkPartLength(node, payload);
    if (offset !== held)
      return [`tool-input CPP_STREAM_CHUNK offset ${offset} of call ${toolCallId}, whose input was ${held} long`];
    applyChunk(graph, payload);
    return [];
  }

  private chunk(payload: StreamChunkFrame['payload']): string[] {
    const { threadId, nodeId, offset, delta } = payload;
    const part = payload.part === 'reasoning' ? 'reasoning' : 'content';
    const what = part === 'content' ? 'text' : 'reasoning';
    if (this.ended.has(nodeId)) return [`CPP_STREAM_CHUNK of node ${nodeId} after its end`];
    const graph = this.graphs.get(threadId);
    if (!graph) return this.looseChunk(nodeId, part, offset, delta);
    const node = graph.nodes[nodeId];
    if (!node) return [`CPP_STREAM_CHUNK of node ${nodeId} before the structural update that creates it`];
    if (node.status !== 'streaming') return [`CPP_STREAM_CHUNK of node ${nodeId}, which is ${node.status}`];
    const held = partText(node, part);
    if (offset !== held.length)
      return [`CPP_STREAM_CHUNK offset ${offset} of node ${nodeId}, whose ${what} was ${held.length} code units long`];
    setPartText(node, part, held + delta);
    const key = `${nodeId} ${part}`;
    this.chunkStarts.set(key, [...(this.chunkStarts.get(key) ?? []), offset]);
    return [];
  }

  /** Without a copy of the thread the text before the first chunk is unknown; later chunks must still continue it. */
  private looseChunk(nodeId: string, part: TextPart, offset: number, delta: string): string[] {
    const key = `${nodeId} ${part}`;
    const reached = this.looseEnds.get(key);
    this.looseEnds.set(key, offset + delta.length);
    return reached === undefined || reached === offset
      ? []
      : [`CPP_STREAM_CHUNK offset ${offset} of node ${nodeId}, whose previous chunk ended at ${reached}`];
  }

  /** A halt's reasoning length is at most what was sent of the reasoning; the copy keeps that much (§11.5). */
  private cutReasoning(payload: StreamHaltedFrame['payload']): string[] {
    const node = this.graphs.get(payload.threadId)?.nodes[payload.interruptedNodeId];
    if (!node) return [];
    const held = partText(node, 'reasoning');
    const final = payload.finalReasoningLength ?? 0;
    if (final > held.length)
      return [
        `CPP_STREAM_HALTED finalReasoningLength ${final} of node ${node.id}, which was sent ${held.length} code units of reasoning`,
      ];
    setPartText(node, 'reasoning', held.slice(0, final));
    return [];
  }

  private end(
    nodeId: string,
    threadId: string,
    finalContentLength: number,
    type: string,
    agrees: (held: number, final: number) => boolean,
  ): string[] {
    this.ended.add(nodeId);
    const node = this.graphs.get(threadId)?.nodes[nodeId];
    if (!node) return [];
    if (node.status !== 'streaming') return [`${type} of node ${nodeId}, which is ${node.status}`];
    if (!agrees(node.content.length, finalContentLength))
      return [
        `${type} finalContentLength ${finalContentLength} of node ${nodeId}, which was sent ${node.content.length} code units`,
      ];
    node.content = node.content.slice(0, finalContentLength);
    return [];
  }

  private soundness(graph: ThreadGraph, type: string): string[] {
    const nodes = Object.values(graph.nodes);
    const streaming = nodes.filter((node) => node.status === 'streaming');
    const violations = findInvariantViolations(graph);
    // One answer streams, or the answers of one prompt that several models write side by side (§5, §30).
    if (streaming.length > MODELS_PER_PROMPT_MAX) violations.push(`${streaming.length} nodes stream at once`);
    if (new Set(streaming.map((node) => node.parentId)).size > 1)
      violations.push(`nodes of different prompts stream at once: ${streaming.map((node) => node.id).join(', ')}`);
    for (const node of streaming)
      if (node.role !== 'assistant' || node.childrenIds.length > 0)
        violations.push(`streaming node ${node.id} is not an assistant node without children`);
    return violations.map(
      (violation) => `after ${type} of thread ${graph.threadId} version ${graph.version}: ${violation}`,
    );
  }

  private findNode(nodeId: string): MessageNode | undefined {
    for (const graph of this.graphs.values()) if (Object.hasOwn(graph.nodes, nodeId)) return graph.nodes[nodeId];
    return undefined;
  }
}
