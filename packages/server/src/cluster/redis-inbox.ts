import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClusterHandlers, CommandReply, ForwardedCommand, SentCommand } from './cluster-transport.js';
import { decodeCommand, decodeReply } from './redis-messages.js';
import type { RedisKeys } from './redis-keys.js';
import type { LockScripts } from './redis-scripts.js';

/** An inbox outlives its instance by a day at most; entries beyond the newest thousand or so are trimmed. */
const INBOX_TTL_MS = 24 * 60 * 60 * 1000;
const INBOX_LENGTH = 1000;
/** How long one blocking read waits before the loop looks whether it should stop. */
const BLOCK_MS = 1000;
const RETRY_AFTER_ERROR_MS = 200;

/**
 * Commands between instances, over one Redis Stream per instance: a command is an entry in its target's inbox and the
 * reply an entry in the sender's. Unlike pub/sub, an entry waits in the stream until its instance reads it, so a
 * command sent while the target is busy (or reconnecting) is not lost; the reply is the acknowledgement that it ran.
 */
export class RedisInbox {
  private readonly pending = new Map<string, (reply: CommandReply | undefined) => void>();
  private stopped = false;
  private reading: Promise<void> | undefined;
  /** Settles the read under way at `stop`: see there. */
  private stopRead: (() => void) | undefined;
  private readonly readStopped = new Promise<null>((resolve) => (this.stopRead = () => resolve(null)));

  constructor(
    private readonly commands: Redis & LockScripts,
    /** A connection of its own: it blocks in XREAD. */
    private readonly reader: Redis,
    private readonly keys: RedisKeys,
    private readonly instanceId: string,
  ) {}

  start(handlers: ClusterHandlers): void {
    this.reading = this.read(handlers);
  }

  /** See `ClusterTransport.sendToLockHolder`; `lock` is the key of the command's thread's lock. */
  async sendToLockHolder(
    lock: string,
    command: ForwardedCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<SentCommand | undefined> {
    if (signal?.aborted) return undefined;
    const id = randomUUID();
    // Waited for before the command is queued: its reply may be read before the script's answer.
    const reply = new Promise<CommandReply | undefined>((resolve) => {
      const timer = setTimeout(() => settle(undefined), timeoutMs);
      const abandon = () => settle(undefined);
      const settle = (reply: CommandReply | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abandon);
        this.pending.delete(id);
        resolve(reply);
      };
      signal?.addEventListener('abort', abandon, { once: true });
      this.pending.set(id, settle);
    });
    const fields = ['kind', 'command', 'id', id, 'from', this.instanceId, 'body', JSON.stringify(command)];
    const holder = await this.commands
      .cppSendToLockHolder(lock, this.instanceId, this.keys.inbox(''), INBOX_LENGTH, INBOX_TTL_MS, ...fields)
      .catch((error: unknown) => {
        this.pending.get(id)?.(undefined);
        throw error;
      });
    if (holder === null || holder === this.instanceId) {
      this.pending.get(id)?.(undefined);
      return undefined;
    }
    return { holder, reply };
  }

  /**
   * Ends the reading loop without waiting for its read: a connection waiting to reconnect (Redis away) keeps the read
   * queued, and ioredis' disconnect() then settles nothing queued, so the read would never end.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopRead?.();
    this.reader.disconnect();
    await this.reading;
    for (const settle of this.pending.values()) settle(undefined);
  }

  private async append(instanceId: string, fields: string[]): Promise<void> {
    const inbox = this.keys.inbox(instanceId);
    await this.commands
      .multi()
      .xadd(inbox, 'MAXLEN', '~', INBOX_LENGTH, '*', ...fields)
      .pexpire(inbox, INBOX_TTL_MS)
      .exec();
  }

  private async read(handlers: ClusterHandlers): Promise<void> {
    const inbox = this.keys.inbox(this.instanceId);
    // A new instance's inbox is new: everything in it is for this instance.
    let lastId = '0-0';
    while (!this.stopped) {
      try {
        const read = this.reader.xread('BLOCK', BLOCK_MS, 'STREAMS', inbox, lastId);
        // Left to settle, or not, after a stop.
        read.catch(() => {});
        const streams = await Promise.race([read, this.readStopped]);
        if (this.stopped) return;
        for (const [, entries] of streams ?? []) {
          for (const [entryId, fields] of entries) {
            lastId = entryId;
            this.dispatch(fieldsOf(fields), handlers);
          }
        }
      } catch (error) {
        if (this.stopped) return;
        handlers.error(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_ERROR_MS));
      }
    }
  }

  private dispatch(fields: Map<string, string>, handlers: ClusterHandlers): void {
    const id = fields.get('id') ?? '';
    const body = fields.get('body') ?? '';
    if (fields.get('kind') === 'reply') {
      this.pending.get(id)?.(decodeReply(body));
      return;
    }
    const from = fields.get('from') ?? '';
    // Commands run side by side: one waiting for its thread must not hold up the others.
    handlers
      .command(decodeCommand(body))
      .then((reply) => this.append(from, ['kind', 'reply', 'id', id, 'body', JSON.stringify(reply)]))
      .catch((error: unknown) => handlers.error(error));
  }
}

function fieldsOf(flat: string[]): Map<string, string> {
  const fields = new Map<string, string>();
  for (let index = 0; index + 1 < flat.length; index += 2) fields.set(flat[index]!, flat[index + 1]!);
  return fields;
}
