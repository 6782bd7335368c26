import { expect } from 'vitest';
import {
  applyChange,
  applyChunk,
  applyHalted,
  applyPatch,
  decodeServerFrame,
  emptyGraph,
  encodeServerFrame,
  getNode,
  graphFromSync,
  safeCutLength,
  type HaltReason,
  type MessageNode,
  type ServerFrameType,
  type ServerPayload,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { THREAD } from './graphs.js';

/**
 * One thread driven as the server drives it — text streamed in chunks, a halt cut at the smaller of what was sent
 * and what the client reports, moved off a surrogate pair, CPP_STREAM_HALTED before the structural update — with
 * every server frame also sent, as encoded JSON, to a client mirror that must stay equal to the source graph.
 */
export class SimulatedThread {
  readonly graph: ThreadGraph = emptyGraph(THREAD);
  readonly mirror: ThreadGraph;
  commits = 0;
  private lastId = 0;
  /** The offsets at which the chunks of the streaming node started, and its last chunk. */
  private chunkStarts: number[] = [];
  private lastChunk: ServerPayload<'CPP_STREAM_CHUNK'> | undefined;

  constructor() {
    const sync = this.send('CPP_SYNC_GRAPH', { ...this.graph, nodes: {}, title: '' });
    this.mirror = graphFromSync(sync);
  }

  freshId(): string {
    this.lastId += 1;
    return `msg_${this.lastId}`;
  }

  nodeIds(): string[] {
    return Object.keys(this.graph.nodes);
  }

  /** A node id chosen by a random index, or undefined in an empty thread. */
  pick(index: number): string | undefined {
    const ids = this.nodeIds();
    return ids.length === 0 ? undefined : ids[index % ids.length];
  }

  streamingNode(): MessageNode | undefined {
    return Object.values(this.graph.nodes).find((node) => node.status === 'streaming');
  }

  node(nodeId: string): MessageNode {
    const node = getNode(this.graph, nodeId);
    if (!node) throw new Error(`no node ${nodeId}`);
    return node;
  }

  /** Commits a structural change and sends it to the mirror as a CPP_GRAPH_PATCH. */
  commit(change: TreeChange): void {
    applyChange(this.graph, change);
    this.commits += 1;
    const patch = this.send('CPP_GRAPH_PATCH', {
      threadId: change.threadId,
      version: change.version,
      rootNodeId: change.rootNodeId,
      activeHeadMessageId: change.activeHeadMessageId,
      nodes: Object.fromEntries(change.nodes.map((node) => [node.id, node])),
    });
    expect(applyPatch(this.mirror, patch)).toBe('applied');
  }

  /** Appends model output to the streaming node, which is not a structural change, and sends it as a chunk. */
  stream(delta: string): void {
    const node = this.streamingNode();
    if (!node) throw new Error('nothing streams');
    const chunk = this.send('CPP_STREAM_CHUNK', {
      threadId: THREAD,
      nodeId: node.id,
      offset: node.content.length,
      delta,
    });
    this.graph.nodes[node.id] = { ...node, content: node.content + delta };
    this.chunkStarts.push(chunk.offset);
    this.lastChunk = chunk;
    expect(applyChunk(this.mirror, chunk)).toBe('applied');
  }

  /** Sends the last chunk again, as after a resync: the mirror must not double it. */
  resendLastChunk(): void {
    if (this.lastChunk) expect(applyChunk(this.mirror, this.send('CPP_STREAM_CHUNK', this.lastChunk))).toBe('stale');
  }

  /** Halts the streaming node and sends CPP_STREAM_HALTED; returns the text kept, for the structural change. */
  halt(reason: HaltReason, receivedContentLength: number | undefined): string {
    const node = this.streamingNode();
    if (!node) throw new Error('nothing streams');
    const cut = safeCutLength(node.content, Math.min(node.content.length, receivedContentLength ?? Infinity));
    const lastStart = this.chunkStarts.filter((start) => start < cut).at(-1);
    const halted = this.send('CPP_STREAM_HALTED', {
      interruptedNodeId: node.id,
      finalContentLength: cut,
      lastChunkReceived: lastStart === undefined ? '' : node.content.slice(lastStart, cut),
      threadId: THREAD,
      reason,
    });
    const kept = node.content.slice(0, cut);
    expect(applyHalted(this.mirror, halted)).toBe('applied');
    expect(this.mirror.nodes[node.id]?.content).toBe(kept);
    this.endStream();
    return kept;
  }

  /** Sends CPP_STREAM_COMPLETED for the streaming node; the mirror learns the status from the update after it. */
  completed(): void {
    const node = this.streamingNode();
    if (!node) throw new Error('nothing streams');
    this.send('CPP_STREAM_COMPLETED', {
      threadId: THREAD,
      nodeId: node.id,
      finalContentLength: node.content.length,
      finishReason: 'stop',
    });
    this.endStream();
  }

  endStream(): void {
    this.chunkStarts = [];
    this.lastChunk = undefined;
  }

  /** The frame as the client decodes it from the wire. */
  private send<Type extends ServerFrameType>(type: Type, payload: ServerPayload<Type>): ServerPayload<Type> {
    const decoded = decodeServerFrame(encodeServerFrame(type, payload));
    if (!decoded.ok) throw new Error(`the server would send an invalid ${type}: ${decoded.message}`);
    return decoded.frame.payload as ServerPayload<Type>;
  }
}
