import { CPPError, ErrorCode, decodeClientFrame } from '@promethea/cpp-protocol';
import { ANONYMOUS_DID } from '../engine/identity.js';
import type { Subscriber } from '../engine/subscriber.js';
import { isThreadFrame } from '../engine/thread-frame.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import type { CommandReply, ThreadLink, ThreadLinks } from '../engine/thread-link.js';
import type { ThreadRegistry } from '../engine/thread-registry.js';
import type { ConversationStore, StoredThread } from '../store/conversation-store.js';
import type { ClusterTransport, ForwardedCommand } from './cluster-transport.js';
import { ForwardedRequester } from './forwarded-requester.js';
import { ThreadReplica } from './thread-replica.js';

export interface ClusterTimings {
  /** How long a generation lock lasts unless renewed (renewed three times as often). Default 3000 ms. */
  lockTtlMs: number;
  /** How often an instance looks for generations whose instance died. Default 500 ms. */
  sweepIntervalMs: number;
  /** How long a forwarded command may wait for its answer. Default: the lock's lifetime and a half second. */
  replyTimeoutMs: number;
  /**
   * How often an instance also asks the store which answers stream, for those that no instance holds the lock of
   * and none has loaded (their instance lost its lock's trace in Redis, then died). Default 5000 ms.
   */
  storeSweepIntervalMs: number;
}

export const DEFAULT_CLUSTER_TIMINGS: ClusterTimings = {
  lockTtlMs: 3000,
  sweepIntervalMs: 500,
  replyTimeoutMs: 3500,
  storeSweepIntervalMs: 5000,
};

const INTERNAL_MESSAGE = 'the server failed to handle this frame; nothing was changed';

/**
 * A server's part in its cluster (the engine's `ThreadLinks` in cluster mode): opens each thread's replica, runs the
 * frames other instances forward to it, and takes over the generations of instances that died.
 */
export class ClusterCoordinator implements ThreadLinks {
  private registry: ThreadRegistry | undefined;
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private sweeping: Promise<void> | undefined;
  /** When the store was last asked for the threads it shows streaming (see `ClusterTimings.storeSweepIntervalMs`). */
  private storeSweptAt = Number.NEGATIVE_INFINITY;
  /** The replica of every thread held here. */
  private readonly replicas = new Set<ThreadReplica>();

  constructor(
    private readonly transport: ClusterTransport,
    private readonly store: ConversationStore,
    private readonly timings: ClusterTimings,
    private readonly onError: (error: unknown) => void,
    /** The cluster answers again after the instance was cut off from it. */
    private readonly onReconnected: () => void = () => {},
  ) {}

  /** Subscribes to the thread's messages, then loads it. */
  async open(threadId: string): Promise<{ link: ThreadLink; stored: StoredThread | undefined }> {
    const { transport, store, onError } = this;
    const { lockTtlMs, replyTimeoutMs } = this.timings;
    const onClose = (replica: ThreadReplica) => this.replicas.delete(replica);
    const { replica, stored } = await ThreadReplica.open(threadId, {
      transport,
      store,
      lockTtlMs,
      replyTimeoutMs,
      onError,
      onClose,
    });
    if (stored) this.replicas.add(replica);
    return { link: replica, stored };
  }

  /**
   * Serves forwarded frames and recovers what dead instances left streaming: only the generations whose instance's lock
   * expired are theirs, which the sweep finds (now, and from then on).
   */
  async start(registry: ThreadRegistry): Promise<void> {
    this.registry = registry;
    await this.transport.start({
      command: (command) => this.run(command),
      error: this.onError,
      reconnected: () => {
        this.onReconnected();
        this.reloadAll();
      },
    });
    this.sweeper = setInterval(() => void this.sweep(), this.timings.sweepIntervalMs);
    this.sweeper.unref();
    await this.sweep();
  }

  /** Readiness: the cluster answers. */
  check(): Promise<void> {
    return this.transport.check();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    await this.sweeping;
  }

  private async run(command: ForwardedCommand): Promise<CommandReply> {
    const decoded = decodeClientFrame(command.frame);
    if (!decoded.ok) return { ok: false, code: decoded.code, message: decoded.message };
    const frame = decoded.frame;
    if (!isThreadFrame(frame))
      return { ok: false, code: ErrorCode.BAD_FRAME, message: `${frame.type} is not forwarded between instances` };
    const requester = new ForwardedRequester();
    // Held like a session holds the threads it acts on: the engine is not unloaded under the command.
    const holder: Subscriber = { send: () => {} };
    let engine: ThreadEngine | undefined;
    try {
      do engine = await this.requireRegistry().require(command.threadId);
      while (!engine.subscribe(holder));
      await engine.apply(frame, command.identity ?? { did: ANONYMOUS_DID, verified: false }, requester);
      return { ok: true, retried: requester.synced, version: engine.graph.version };
    } catch (error) {
      if (CPPError.isInstance(error)) return { ok: false, code: error.code, message: error.message };
      this.onError(error);
      return { ok: false, code: ErrorCode.INTERNAL, message: INTERNAL_MESSAGE };
    } finally {
      engine?.unsubscribe(holder);
    }
  }

  /**
   * After the instance was cut off from the cluster, every thread held here is reloaded: messages may have been lost.
   */
  private reloadAll(): void {
    for (const replica of this.replicas) replica.reload().catch((error: unknown) => this.onError(error));
  }

  /**
   * One pass at a time: the generations whose instance died, known to the cluster, streaming in a thread held here,
   * or (now and then) streaming in the store.
   */
  private sweep(): Promise<void> {
    this.sweeping ??= this.recoverOrphans()
      .catch((error: unknown) => this.onError(error))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async recoverOrphans(): Promise<void> {
    const registry = this.requireRegistry();
    const orphans = new Set(await this.transport.orphanedGenerations());
    // Answers shown streaming that no server holds the lock of: its server died without a trace in Redis (which
    // restarted, or which it lost the lock in), or it has just ended the answer and the end is on its way. Copies
    // held here are looked at every pass; the store, for threads no server may have loaded, now and then.
    const copies = registry
      .all()
      .filter((engine) => engine.streamsElsewhere())
      .map((engine) => engine.threadId);
    const stored = await this.storeStreamingThreads();
    const streaming = [...new Set([...copies, ...stored])].filter((threadId) => !orphans.has(threadId));
    const holders = await Promise.all(streaming.map((threadId) => this.transport.lockHolder(threadId)));
    const unheld = streaming.filter((_, index) => holders[index] === undefined);
    await Promise.all([
      ...[...orphans].map(async (threadId) => (await this.load(threadId))?.recoverLostGeneration()),
      ...unheld.map(async (threadId) => (await this.load(threadId))?.recoverStaleGeneration()),
    ]);
  }

  /** The threads the store shows streaming, once every `storeSweepIntervalMs`; none between. */
  private async storeStreamingThreads(): Promise<string[]> {
    if (Date.now() - this.storeSweptAt < this.timings.storeSweepIntervalMs) return [];
    this.storeSweptAt = Date.now();
    return this.store.streamingThreads();
  }

  /** The thread's engine, loaded if need be; undefined when the thread is gone. */
  private async load(threadId: string): Promise<ThreadEngine | undefined> {
    try {
      return await this.requireRegistry().require(threadId);
    } catch (error) {
      if (!CPPError.isInstance(error)) this.onError(error);
      return undefined;
    }
  }

  private requireRegistry(): ThreadRegistry {
    if (!this.registry) throw new Error('the cluster coordinator has not started');
    return this.registry;
  }
}
