import {
  encodeServerFrame,
  type HaltReason,
  type ServerFrameType,
  type ServerPayload,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { ThreadRecord } from '../store/conversation-store.js';
import type { Cut } from './cut.js';
import type { Subscriber } from './subscriber.js';
import { SyncFrameCache } from './sync-frame-cache.js';
import type { ThreadLink } from './thread-link.js';

/**
 * Where the frames of one thread go: to this node's subscribers, each getting changes as it asked (patches or the
 * whole graph), and, for what this node publishes, through the link to the other nodes.
 */
export class ThreadFanout {
  private readonly subscribers = new Map<Subscriber, { patches: boolean }>();
  private readonly syncs: SyncFrameCache;

  constructor(
    private readonly graph: ThreadGraph,
    private readonly record: ThreadRecord,
    private readonly link: ThreadLink,
  ) {
    this.syncs = new SyncFrameCache(graph, record);
  }

  get size(): number {
    return this.subscribers.size;
  }

  has(subscriber: Subscriber): boolean {
    return this.subscribers.has(subscriber);
  }

  /** A subscriber already there keeps the mode it asked for, unless it asks again. */
  subscribe(subscriber: Subscriber, patches: boolean | undefined): void {
    const existing = this.subscribers.get(subscriber);
    this.subscribers.set(subscriber, { patches: patches ?? existing?.patches ?? false });
  }

  /** The thread is gone: nobody is subscribed any more. */
  unsubscribeAll(): void {
    this.subscribers.clear();
  }

  /** Sends `text` to the subscribers acting as `did` and unsubscribes them: those it unsubscribed. */
  revoke(did: string, text: string): Subscriber[] {
    const revoked: Subscriber[] = [];
    for (const subscriber of this.subscribers.keys()) {
      if (subscriber.identity?.did !== did) continue;
      subscriber.send(text);
      this.subscribers.delete(subscriber);
      revoked.push(subscriber);
    }
    return revoked;
  }

  /** False when `subscriber` was not subscribed. */
  unsubscribe(subscriber: Subscriber): boolean {
    return this.subscribers.delete(subscriber);
  }

  publishHalted(nodeId: string, cut: Cut, reason: HaltReason): void {
    this.publish('CPP_STREAM_HALTED', {
      interruptedNodeId: nodeId,
      finalContentLength: cut.finalContentLength,
      lastChunkReceived: cut.lastChunkReceived,
      threadId: this.graph.threadId,
      reason,
      ...(cut.reasoning.length > 0 ? { finalReasoningLength: cut.reasoning.length } : {}),
      ...(cut.part === 'reasoning' ? { part: cut.part } : {}),
    });
  }

  /** The change goes to the other nodes and to this node's subscribers. */
  publishChange(change: TreeChange): void {
    const patch = encodeServerFrame('CPP_GRAPH_PATCH', {
      threadId: this.graph.threadId,
      version: change.version,
      rootNodeId: change.rootNodeId,
      activeHeadMessageId: change.activeHeadMessageId,
      nodes: Object.fromEntries(change.nodes.map((node) => [node.id, node])),
      ...(change.removedNodeIds ? { removedNodeIds: change.removedNodeIds } : {}),
      title: this.record.title,
    });
    this.link.change(change, patch, this.record.title);
    this.sendChange(patch);
  }

  /** Each subscriber gets the change as it asked: the patch of the changed nodes, or the whole graph. */
  sendChange(patch: string): void {
    let sync: string | undefined;
    for (const [subscriber, { patches }] of this.subscribers)
      subscriber.send(patches ? patch : (sync ??= this.syncFrame()));
  }

  /** `chunk` goes beside the text of a CPP_STREAM_CHUNK: a subscriber whose socket is behind merges chunks. */
  publish<Type extends ServerFrameType>(
    type: Type,
    payload: ServerPayload<Type>,
    chunk?: ServerPayload<'CPP_STREAM_CHUNK'>,
  ): void {
    const text = encodeServerFrame(type, payload);
    if (chunk) this.link.chunk(chunk, text);
    else this.link.frame(text);
    this.send(text, chunk);
  }

  /** To this node's subscribers only. */
  send(text: string, chunk?: ServerPayload<'CPP_STREAM_CHUNK'>): void {
    for (const subscriber of this.subscribers.keys()) subscriber.send(text, chunk);
  }

  syncFrame(): string {
    return this.syncs.get();
  }
}
