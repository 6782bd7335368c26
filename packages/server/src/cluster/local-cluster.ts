import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEXT_PARTS, type TextPart } from '@promethea/cpp-protocol';
import type {
  ClusterHandlers,
  ClusterTransport,
  CommandReply,
  ForwardedCommand,
  LockLease,
  SentCommand,
  StreamedDelta,
  Subscription,
  FrameMessage,
  ThreadMessage,
} from './cluster-transport.js';

interface HeldLock {
  holder: string;
  token: number;
  expiresAt: number;
}

interface Listener {
  member: LocalClusterTransport;
  deliver(message: ThreadMessage): void;
}

/**
 * The shared state of instances in one process: what Redis holds for instances in several. `new LocalCluster()` and one
 * `join()` per server give in-process servers that coordinate exactly as separate processes would.
 */
export class LocalCluster {
  readonly members = new Map<string, LocalClusterTransport>();
  readonly listeners = new Map<string, Set<Listener>>();
  readonly texts = new Map<string, string>();
  readonly locks = new Map<string, HeldLock>();
  readonly fences = new Map<string, number>();
  /** Threads whose lock was taken and not released, and by whom. */
  readonly generations = new Map<string, string>();

  join(): LocalClusterTransport {
    return new LocalClusterTransport(this, false);
  }

  /** The lock, unless it has expired. */
  liveLock(threadId: string): HeldLock | undefined {
    const lock = this.locks.get(threadId);
    return lock && lock.expiresAt > Date.now() ? lock : undefined;
  }
}

/**
 * An instance of a `LocalCluster`. Without a cluster it is the only instance there is (`solitary`): the default of a
 * `CPPServer`, where it adds nothing to what a single process does.
 */
export class LocalClusterTransport implements ClusterTransport {
  readonly instanceId = `instance_${randomUUID()}`;
  private handlers: ClusterHandlers | undefined;

  constructor(
    private readonly cluster = new LocalCluster(),
    readonly solitary = true,
  ) {}

  async start(handlers: ClusterHandlers): Promise<void> {
    this.handlers = handlers;
    this.cluster.members.set(this.instanceId, this);
  }

  publish(threadId: string, message: ThreadMessage): void {
    for (const listener of this.cluster.listeners.get(threadId) ?? []) {
      // Later, as over a network: a publisher never runs its receivers' code inside its own.
      if (listener.member !== this) queueMicrotask(() => listener.deliver(message));
    }
  }

  async subscribe(threadId: string, deliver: (message: ThreadMessage) => void): Promise<Subscription> {
    const listener: Listener = { member: this, deliver };
    const listeners = this.cluster.listeners.get(threadId) ?? new Set<Listener>();
    listeners.add(listener);
    this.cluster.listeners.set(threadId, listeners);
    return {
      unsubscribe: async () => {
        listeners.delete(listener);
        if (listeners.size === 0 && this.cluster.listeners.get(threadId) === listeners)
          this.cluster.listeners.delete(threadId);
      },
    };
  }

  async streamChunk(threadId: string, token: number, chunk: StreamedDelta, message: FrameMessage): Promise<boolean> {
    const lock = this.cluster.liveLock(threadId);
    const held = lock
      ? lock.holder === this.instanceId && lock.token === token
      : this.cluster.fences.get(threadId) === token;
    if (!held) return false;
    const key = textKey(chunk.nodeId, chunk.part);
    this.cluster.texts.set(key, (this.cluster.texts.get(key) ?? '') + chunk.delta);
    this.publish(threadId, message);
    return true;
  }

  async readText(nodeId: string, part: TextPart): Promise<string> {
    return this.cluster.texts.get(textKey(nodeId, part)) ?? '';
  }

  endText(nodeId: string): void {
    for (const part of TEXT_PARTS) this.cluster.texts.delete(textKey(nodeId, part));
  }

  async acquireLock(threadId: string, ttlMs: number): Promise<number | undefined> {
    if (this.cluster.liveLock(threadId)) return undefined;
    const token = (this.cluster.fences.get(threadId) ?? 0) + 1;
    this.cluster.fences.set(threadId, token);
    this.cluster.locks.set(threadId, { holder: this.instanceId, token, expiresAt: Date.now() + ttlMs });
    this.cluster.generations.set(threadId, this.instanceId);
    return token;
  }

  async renewLock(threadId: string, token: number, ttlMs: number): Promise<boolean> {
    const lock = this.cluster.liveLock(threadId);
    const ours = lock
      ? lock.holder === this.instanceId && lock.token === token
      : this.cluster.fences.get(threadId) === token;
    if (ours) this.cluster.locks.set(threadId, { holder: this.instanceId, token, expiresAt: Date.now() + ttlMs });
    return ours;
  }

  async releaseLock(threadId: string, token: number): Promise<void> {
    const lock = this.cluster.locks.get(threadId);
    if (lock?.holder !== this.instanceId || lock.token !== token) return;
    this.cluster.locks.delete(threadId);
    this.cluster.generations.delete(threadId);
  }

  async lockHolder(threadId: string): Promise<string | undefined> {
    return this.cluster.liveLock(threadId)?.holder;
  }

  async lockLease(threadId: string): Promise<LockLease | undefined> {
    const lock = this.cluster.liveLock(threadId);
    if (lock) return { holder: lock.holder, expiresInMs: lock.expiresAt - Date.now() };
    const holder = this.cluster.generations.get(threadId);
    return holder === undefined ? undefined : { holder, expired: true };
  }

  async orphanedGenerations(): Promise<string[]> {
    return [...this.cluster.generations.keys()].filter((threadId) => !this.cluster.liveLock(threadId));
  }

  async sendToLockHolder(
    command: ForwardedCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<SentCommand | undefined> {
    const holder = this.cluster.liveLock(command.threadId)?.holder;
    if (holder === undefined || holder === this.instanceId || signal?.aborted) return undefined;
    return { holder, reply: this.send(holder, command, timeoutMs, signal) };
  }

  private async send(
    instanceId: string,
    command: ForwardedCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<CommandReply | undefined> {
    const handlers = this.cluster.members.get(instanceId)?.handlers;
    if (!handlers || signal?.aborted) return undefined;
    const waiting = new AbortController();
    const abandon = () => waiting.abort();
    signal?.addEventListener('abort', abandon, { once: true });
    const gaveUp = sleep(timeoutMs, undefined, { signal: waiting.signal }).catch(() => undefined);
    try {
      return await Promise.race([handlers.command(structuredClone(command)), gaveUp]);
    } finally {
      signal?.removeEventListener('abort', abandon);
      waiting.abort();
    }
  }

  async check(): Promise<void> {}

  async close(): Promise<void> {
    if (this.cluster.members.get(this.instanceId) === this) this.cluster.members.delete(this.instanceId);
    this.handlers = undefined;
  }
}

function textKey(nodeId: string, part: TextPart): string {
  return `${part}:${nodeId}`;
}
