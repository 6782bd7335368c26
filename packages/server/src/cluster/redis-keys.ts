import type { TextPart } from '@promethea/cpp-protocol';

/** What a cluster puts before its keys unless told otherwise. */
export const DEFAULT_REDIS_PREFIX = 'cpp:';

/**
 * Every key and channel of a cluster, under one prefix (`cpp:` by default), so that several deployments (or test
 * runs) can share a Redis.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** Pub/sub channel of a thread's messages. */
  thread(threadId: string): string {
    return `${this.prefix}thread:${threadId}`;
  }

  /** The text of one part a streaming node has streamed so far (APPEND); the answer's key is as before parts. */
  text(nodeId: string, part: TextPart): string {
    return part === 'content' ? `${this.prefix}text:${nodeId}` : `${this.prefix}${part}:${nodeId}`;
  }

  /** A thread's generation lock: `<instance id> <fencing token>`, with an expiry. */
  lock(threadId: string): string {
    return `${this.prefix}gen:${threadId}`;
  }

  /** The counter a thread's fencing tokens come from. */
  fence(threadId: string): string {
    return `${this.prefix}fence:${threadId}`;
  }

  /** Hash of the threads whose lock was taken and not released, to the instance that took it. */
  generations(): string {
    return `${this.prefix}generations`;
  }

  /** An instance's stream of commands and replies addressed to it. */
  inbox(instanceId: string): string {
    return `${this.prefix}inbox:${instanceId}`;
  }
}
