import { randomUUID } from 'node:crypto';
import { TEXT_PARTS, type TextPart } from '@promethea/cpp-protocol';
import { Redis } from 'ioredis';
import type {
  ClusterHandlers,
  ClusterTransport,
  ForwardedCommand,
  LockLease,
  SentCommand,
  StreamedDelta,
  Subscription,
  FrameMessage,
  ThreadMessage,
} from './cluster-transport.js';
import { RedisInbox } from './redis-inbox.js';
import { DEFAULT_REDIS_PREFIX, RedisKeys } from './redis-keys.js';
import { encodePublished } from './redis-messages.js';
import { defineLockScripts, type LockScripts } from './redis-scripts.js';
import { RedisSubscriptions } from './redis-subscriptions.js';

export interface RedisClusterOptions {
  /** e.g. `redis://127.0.0.1:6379`. */
  url: string;
  /** Put before every key and channel, so that deployments sharing a Redis stay apart. Default `cpp:`. */
  prefix?: string;
}

export { DEFAULT_REDIS_PREFIX };

/** A streaming node's text is kept this long after its last chunk, and this long after it stops streaming. */
const TEXT_TTL_MS = 60 * 60 * 1000;
const ENDED_TEXT_TTL_MS = 60 * 1000;

/** Commands fail fast while Redis is unreachable (the client sees INTERNAL) instead of queueing without end. */
const CONNECTION_OPTIONS = { lazyConnect: true, maxRetriesPerRequest: 1 } as const;

/**
 * Several server processes on one Redis: pub/sub per thread for what each instance sends its subscribers, APPENDed
 * text for instances that join a stream midway, a lock with expiry and fencing token per generating thread, and a
 * stream per instance for commands that must run where a generation runs. Three connections: commands, subscriber
 * mode, and one that blocks reading the inbox.
 */
export class RedisClusterTransport implements ClusterTransport {
  readonly solitary = false;
  private readonly keys: RedisKeys;
  private readonly subscriptions: RedisSubscriptions;
  private readonly inbox: RedisInbox;
  private handlers: ClusterHandlers | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly instanceId: string,
    private readonly redis: Redis & LockScripts,
    private readonly subscriber: Redis,
    reader: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
    this.subscriptions = new RedisSubscriptions(
      subscriber,
      this.instanceId,
      (error) => this.reportError(error),
      () => this.handlers?.reconnected(),
    );
    this.inbox = new RedisInbox(redis, reader, this.keys, this.instanceId);
    // Reconnections are ioredis' business; without listeners its 'error' events would crash the process.
    for (const connection of [redis, subscriber, reader])
      connection.on('error', (error: unknown) => this.reportError(error));
  }

  /** Connects, failing when Redis cannot be reached. */
  static async connect({ url, prefix = DEFAULT_REDIS_PREFIX }: RedisClusterOptions): Promise<RedisClusterTransport> {
    const instanceId = `instance_${randomUUID()}`;
    // Named, so that CLIENT LIST shows whose each connection is.
    const open = (role: string) =>
      new Redis(url, { ...CONNECTION_OPTIONS, connectionName: `cpp-${role}-${instanceId}` });
    const connections = [open('commands'), open('subscriber'), open('inbox')] as const;
    // The first failure says why (ECONNREFUSED, NOAUTH, …); connect() itself only says the connection closed.
    let cause: unknown;
    for (const connection of connections) connection.on('error', (error: unknown) => (cause ??= error));
    try {
      await Promise.all(connections.map((connection) => connection.connect()));
    } catch (error) {
      for (const connection of connections) connection.disconnect();
      cause ??= error;
      throw new Error(`Redis is not reachable at ${url}: ${cause instanceof Error ? cause.message : String(cause)}`, {
        cause,
      });
    }
    for (const connection of connections) connection.removeAllListeners('error');
    const [commands, subscriber, reader] = connections;
    return new RedisClusterTransport(instanceId, defineLockScripts(commands), subscriber, reader, prefix);
  }

  async start(handlers: ClusterHandlers): Promise<void> {
    this.handlers = handlers;
    this.inbox.start(handlers);
  }

  publish(threadId: string, message: ThreadMessage): void {
    this.redis
      .publish(this.keys.thread(threadId), encodePublished(this.instanceId, message))
      .catch((error: unknown) => this.reportError(error));
  }

  subscribe(threadId: string, listener: (message: ThreadMessage) => void): Promise<Subscription> {
    return this.subscriptions.subscribe(this.keys.thread(threadId), listener);
  }

  async streamChunk(threadId: string, token: number, chunk: StreamedDelta, message: FrameMessage): Promise<boolean> {
    const { keys } = this;
    const streamed = await this.redis.cppStreamChunk(
      keys.lock(threadId),
      keys.fence(threadId),
      keys.text(chunk.nodeId, chunk.part),
      keys.thread(threadId),
      this.lockValue(token),
      token,
      chunk.delta,
      TEXT_TTL_MS,
      encodePublished(this.instanceId, message),
    );
    return streamed === 1;
  }

  async readText(nodeId: string, part: TextPart): Promise<string> {
    return (await this.redis.get(this.keys.text(nodeId, part))) ?? '';
  }

  endText(nodeId: string): void {
    const ending = this.redis.multi();
    for (const part of TEXT_PARTS) ending.pexpire(this.keys.text(nodeId, part), ENDED_TEXT_TTL_MS);
    ending.exec().catch((error: unknown) => this.reportError(error));
  }

  async acquireLock(threadId: string, ttlMs: number): Promise<number | undefined> {
    const { keys } = this;
    const token = await this.redis.cppAcquireLock(
      keys.lock(threadId),
      keys.fence(threadId),
      keys.generations(),
      this.instanceId,
      ttlMs,
      threadId,
    );
    return token ?? undefined;
  }

  async renewLock(threadId: string, token: number, ttlMs: number): Promise<boolean> {
    const { keys } = this;
    return (
      (await this.redis.cppRenewLock(
        keys.lock(threadId),
        keys.fence(threadId),
        this.lockValue(token),
        token,
        ttlMs,
      )) === 1
    );
  }

  async releaseLock(threadId: string, token: number): Promise<void> {
    const { keys } = this;
    await this.redis.cppReleaseLock(
      keys.lock(threadId),
      keys.fence(threadId),
      keys.generations(),
      this.lockValue(token),
      token,
      threadId,
    );
  }

  async lockHolder(threadId: string): Promise<string | undefined> {
    const value = await this.redis.get(this.keys.lock(threadId));
    return value?.split(' ')[0];
  }

  async lockLease(threadId: string): Promise<LockLease | undefined> {
    // One transaction: the three reads see the same moment, so an expiry between them cannot be misread.
    const results = await this.redis
      .multi()
      .get(this.keys.lock(threadId))
      .pttl(this.keys.lock(threadId))
      .hget(this.keys.generations(), threadId)
      .exec();
    const [value, expiresInMs, generation] = (results ?? []).map(([error, result]) => {
      if (error) throw error;
      return result;
    }) as [string | null, number, string | null];
    if (value !== null) return { holder: value.split(' ')[0]!, expiresInMs: Math.max(expiresInMs, 0) };
    return generation === null ? undefined : { holder: generation, expired: true };
  }

  orphanedGenerations(): Promise<string[]> {
    return this.redis.cppOrphanedGenerations(this.keys.generations(), this.keys.lock(''));
  }

  sendToLockHolder(
    command: ForwardedCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<SentCommand | undefined> {
    return this.inbox.sendToLockHolder(this.keys.lock(command.threadId), command, timeoutMs, signal);
  }

  async check(): Promise<void> {
    await this.redis.ping();
  }

  close(): Promise<void> {
    this.closing ??= this.disconnect();
    return this.closing;
  }

  private async disconnect(): Promise<void> {
    await this.inbox.stop();
    this.subscriber.disconnect();
    // quit() lets the commands sent before it finish, but is itself queued while the connection waits to reconnect:
    // with Redis away it would wait for Redis, and the connection go on reconnecting.
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }

  private lockValue(token: number): string {
    return `${this.instanceId} ${token}`;
  }

  private reportError(error: unknown): void {
    this.handlers?.error(error);
  }
}
