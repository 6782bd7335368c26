import { setTimeout as sleep } from 'node:timers/promises';
import {
  TEXT_PARTS,
  decodeServerFrame,
  encodeClientFrame,
  partText,
  setPartText,
  type PresentIdentity,
  type StreamChunkFrame,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ThreadFrame } from '../engine/thread-frame.js';
import type { CommandReply, LinkedEngine, ThreadLink } from '../engine/thread-link.js';
import type { ConversationStore, StoredThread } from '../store/conversation-store.js';
import type { ClusterTransport, Subscription, ThreadMessage } from './cluster-transport.js';

export interface ReplicaContext {
  transport: ClusterTransport;
  store: ConversationStore;
  /** How long a generation lock lasts without renewal; renewed three times as often. */
  lockTtlMs: number;
  /** How long a forwarded command may take before its instance counts as dead. */
  replyTimeoutMs: number;
  onError(error: unknown): void;
  /** The replica was closed. */
  onClose(replica: ThreadReplica): void;
}

/** Loads of a thread that come back older than the copy, before the reload gives up (one is already unlikely). */
const STALE_LOAD_ATTEMPTS = 3;

interface HeldLock {
  token: number;
  renewal: ReturnType<typeof setInterval>;
  /**
   * When the last acquisition or renewal that went through was sent: the lock is certainly this instance's until
   * then plus its lifetime (Redis set its expiry later than that, never sooner).
   */
  confirmedAt: number;
}

/**
 * This instance's copy of one thread in the cluster, the `ThreadLink` of its engine in cluster mode. It subscribes to
 * the thread's messages before it loads the thread, so that nothing committed or streamed between the two is missed:
 * messages wait while the thread loads (or reloads) and then apply with the version and offset rules, which skip what
 * the load already had.
 */
export class ThreadReplica implements ThreadLink {
  private engine: LinkedEngine | undefined;
  private waiting: ThreadMessage[] | undefined = [];
  private subscription: Subscription | undefined;
  private reloading: Promise<void> | undefined;
  private lock: HeldLock | undefined;

  private constructor(
    private readonly threadId: string,
    private readonly context: ReplicaContext,
  ) {}

  /** Subscribes, then loads the thread; `stored` is undefined when it does not exist (then the replica is closed). */
  static async open(
    threadId: string,
    context: ReplicaContext,
  ): Promise<{ replica: ThreadReplica; stored: StoredThread | undefined }> {
    const replica = new ThreadReplica(threadId, context);
    replica.subscription = await context.transport.subscribe(threadId, (message) => replica.receive(message));
    try {
      const stored = await replica.load();
      if (!stored) await replica.close();
      return { replica, stored };
    } catch (error) {
      await replica.close();
      throw error;
    }
  }

  /** From now on the engine receives the other instances' messages, first those that came while the thread loaded. */
  attach(engine: LinkedEngine): void {
    this.engine = engine;
    this.flush();
  }

  async close(): Promise<void> {
    this.context.onClose(this);
    // Closed when its engine goes idle, which may come before the engine settles the lock: let go of it here.
    this.releaseGeneration();
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.unsubscribe();
  }

  chunk(chunk: StreamChunkFrame['payload'], text: string): void {
    const lock = this.lock;
    // A generation that lost its lock stops at once: nothing more of it goes out.
    if (!lock) return;
    // A tool call's input is not kept apart: the node's CPP_TOOL_CALL with the whole input follows it.
    if (chunk.part === 'tool-input') return this.context.transport.publish(this.threadId, { frame: text });
    // Appended with its publication: an instance that reads the text after subscribing misses no chunk.
    const streamed = { nodeId: chunk.nodeId, part: chunk.part ?? ('content' as const), delta: chunk.delta };
    this.context.transport.streamChunk(this.threadId, lock.token, streamed, { frame: text }).then(
      (kept) => {
        if (!kept) this.lose(lock);
      },
      (error: unknown) => this.context.onError(error),
    );
  }

  frame(text: string): void {
    this.context.transport.publish(this.threadId, { frame: text });
  }

  change(change: TreeChange, text: string, title: string | undefined): void {
    this.context.transport.publish(this.threadId, title === undefined ? { frame: text } : { frame: text, title });
    for (const node of change.nodes)
      if (node.role === 'assistant' && node.status !== 'streaming') this.context.transport.endText(node.id);
  }

  presence(present: PresentIdentity[], ask: boolean): void {
    const { transport } = this.context;
    transport.publish(this.threadId, { presence: { instance: transport.instanceId, present, ask } });
  }

  async claimGeneration(): Promise<boolean> {
    if (this.lock) return true;
    const { transport, lockTtlMs } = this.context;
    const confirmedAt = Date.now();
    const token = await transport.acquireLock(this.threadId, lockTtlMs);
    if (token === undefined) return false;
    const renewal = setInterval(() => void this.renew(), lockTtlMs / 3);
    renewal.unref();
    this.lock = { token, renewal, confirmedAt };
    return true;
  }

  async confirmGeneration(): Promise<void> {
    if (!this.lock) return;
    if (!(await this.renew())) throw new Error(`another instance took over the generation of thread ${this.threadId}`);
  }

  releaseGeneration(): void {
    const lock = this.lock;
    if (!lock) return;
    this.stopRenewal();
    this.context.transport
      .releaseLock(this.threadId, lock.token)
      .catch((error: unknown) => this.context.onError(error));
  }

  async forward(frame: ThreadFrame, identity: Identity): Promise<CommandReply | undefined> {
    const { transport, replyTimeoutMs } = this.context;
    // The identity goes with the frame: the owner's hooks and 'pivot' listeners are told who asked.
    const forwarded = { threadId: this.threadId, frame: encodeClientFrame(frame), identity };
    const settled = new AbortController();
    let owner: string;
    try {
      const sent = await transport.sendToLockHolder(forwarded, replyTimeoutMs, settled.signal);
      if (!sent) return undefined;
      owner = sent.holder;
      // A dead owner never answers: waiting for its lock to expire tells sooner than the reply timeout.
      const reply = await Promise.race([
        sent.reply,
        this.lockExpired(owner, settled.signal).then((expired) => (expired ? undefined : sent.reply)),
      ]);
      if (reply) return reply;
    } finally {
      settled.abort();
    }
    if ((await transport.lockHolder(this.threadId)) === owner) {
      throw new Error(
        `instance ${owner} runs the generation of thread ${this.threadId} and did not answer within ${replyTimeoutMs} ms`,
      );
    }
    return undefined;
  }

  /**
   * Resolves true once `owner`'s lock expired instead of being released (its instance died), checking again whenever
   * the lock would run out: a live owner renews it before then. False when it was released or taken by another
   * instance (then the owner's reply, or its timeout, tells), when the lock cannot be read, or when `stop` aborts.
   */
  private async lockExpired(owner: string, stop: AbortSignal): Promise<boolean> {
    while (!stop.aborted) {
      const lease = await this.context.transport.lockLease(this.threadId).catch((error: unknown) => {
        // The reply may still come: only the shortcut is lost.
        this.context.onError(error);
        return null;
      });
      if (lease === null) return false;
      if (lease?.holder !== owner) return false;
      if ('expired' in lease) return true;
      // One millisecond past the expiry, so that the next read sees the lock gone unless it was renewed.
      const ran = await sleep(lease.expiresInMs + 1, true, { signal: stop }).catch(() => false);
      if (!ran) return false;
    }
    return false;
  }

  reload(): Promise<void> {
    this.reloading ??= this.reloadNow().finally(() => {
      this.reloading = undefined;
      this.flush();
    });
    return this.reloading;
  }

  private async reloadNow(): Promise<void> {
    this.waiting ??= [];
    // A load that raced a commit of this instance's may come back older than the copy, which has the commit since:
    // the next one, read after it, does not.
    for (let attempt = 1; ; attempt += 1) {
      const stored = await this.load();
      if (!stored || !this.engine || this.engine.resynchronise(stored)) return;
      if (attempt === STALE_LOAD_ATTEMPTS)
        throw new Error(`thread ${this.threadId} in the store stays older than this instance's copy`);
    }
  }

  /** The thread as committed, with the text its streaming node has streamed beyond the store's last batch. */
  private async load(): Promise<StoredThread | undefined> {
    const stored = await this.context.store.loadThread(this.threadId);
    if (!stored) return undefined;
    for (const node of Object.values(stored.graph.nodes)) {
      if (node.status !== 'streaming') continue;
      for (const part of TEXT_PARTS) {
        const [stored, streamed] = [partText(node, part), await this.context.transport.readText(node.id, part)];
        if (streamed.length > stored.length && streamed.startsWith(stored)) setPartText(node, part, streamed);
      }
    }
    return stored;
  }

  private receive(message: ThreadMessage): void {
    if (this.waiting || !this.engine) {
      (this.waiting ??= []).push(message);
      return;
    }
    if ('presence' in message) {
      const { instance, present, ask } = message.presence;
      return this.engine.applyPresence(instance, present, ask);
    }
    const decoded = decodeServerFrame(message.frame);
    if (!decoded.ok)
      return this.context.onError(
        new Error(`a message of thread ${this.threadId} is not a server frame: ${decoded.message}`),
      );
    if (!this.engine.applyRemote(decoded.frame, message.frame, message.title)) {
      this.reload().catch((error: unknown) => this.context.onError(error));
    }
  }

  private flush(): void {
    const waiting = this.waiting ?? [];
    this.waiting = undefined;
    // A message may start a reload: those after it wait again.
    for (const message of waiting) this.receive(message);
  }

  /**
   * Keeps the lock; when another instance has taken it, this instance stops its generation. While Redis cannot be
   * reached the generation rides the outage out as long as the lock is certainly still its own: past its lifetime
   * since it was last confirmed, another instance may have taken it, and the generation stops as if it had.
   */
  private async renew(): Promise<boolean> {
    const lock = this.lock;
    if (!lock) return false;
    const { transport, lockTtlMs } = this.context;
    const sentAt = Date.now();
    if (sentAt - lock.confirmedAt >= lockTtlMs) {
      this.lose(lock);
      return false;
    }
    let kept: boolean;
    try {
      kept = await transport.renewLock(this.threadId, lock.token, lockTtlMs);
    } catch (error) {
      this.context.onError(error);
      return true;
    }
    if (kept) lock.confirmedAt = sentAt;
    else this.lose(lock);
    return kept;
  }

  /** Another instance has taken the lock over: this instance stops its generation. */
  private lose(lock: HeldLock): void {
    if (this.lock !== lock) return;
    this.stopRenewal();
    this.engine?.generationLost();
  }

  private stopRenewal(): void {
    clearInterval(this.lock?.renewal);
    this.lock = undefined;
  }
}
