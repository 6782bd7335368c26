import type { Redis } from 'ioredis';

/**
 * The generation lock's steps, and a command sent to its holder, each one Lua script so that Redis runs it
 * atomically. Lock value: `<instance id> <token>`; tokens come from the thread's fence counter, so a later holder
 * always has a greater one.
 */
const SCRIPTS = {
  /** KEYS lock, fence, generations; ARGV instance, ttl, thread. The token, or nil when the lock is held. */
  cppAcquireLock: {
    numberOfKeys: 3,
    lua: `
      if redis.call('EXISTS', KEYS[1]) == 1 then return false end
      local token = redis.call('INCR', KEYS[2])
      redis.call('PEXPIRE', KEYS[2], 604800000)
      redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. token, 'PX', ARGV[2])
      redis.call('HSET', KEYS[3], ARGV[3], ARGV[1])
      return token`,
  },
  /**
   * KEYS lock, fence; ARGV value, token, ttl. 1 when still (or again) held: expired, it is taken back if nobody took it
   * since.
   */
  cppRenewLock: {
    numberOfKeys: 2,
    lua: `
      local held = redis.call('GET', KEYS[1])
      if held == ARGV[1] then
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        return 1
      end
      if not held and redis.call('GET', KEYS[2]) == ARGV[2] then
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
        return 1
      end
      return 0`,
  },
  /**
   * KEYS lock, fence, text, channel; ARGV value, token, delta, text ttl, message. Appends the delta and publishes the
   * message while the lock is held with the token (or expired with nobody taking it since, as for a renewal): 1;
   * otherwise does neither: 0.
   */
  cppStreamChunk: {
    numberOfKeys: 4,
    lua: `
      local held = redis.call('GET', KEYS[1])
      if held ~= ARGV[1] and (held or redis.call('GET', KEYS[2]) ~= ARGV[2]) then return 0 end
      redis.call('APPEND', KEYS[3], ARGV[3])
      redis.call('PEXPIRE', KEYS[3], ARGV[4])
      redis.call('PUBLISH', KEYS[4], ARGV[5])
      return 1`,
  },
  /**
   * KEYS lock, fence, generations; ARGV value, token, thread. Forgets the generation unless another instance took it
   * since.
   */
  cppReleaseLock: {
    numberOfKeys: 3,
    lua: `
      local held = redis.call('GET', KEYS[1])
      if held == ARGV[1] or (not held and redis.call('GET', KEYS[2]) == ARGV[2]) then
        redis.call('DEL', KEYS[1])
        redis.call('HDEL', KEYS[3], ARGV[3])
      end
      return 0`,
  },
  /**
   * KEYS generations; ARGV lock key prefix. The threads whose generation was registered and whose lock is gone, read at
   * one moment: read in two steps, a lock released between them (which forgets its generation too) would look expired,
   * and an instance would take a live thread's lock to recover it. Lock keys are built here from the prefix, as the
   * inbox key below (one Redis; Redis Cluster is not supported).
   */
  cppOrphanedGenerations: {
    numberOfKeys: 1,
    lua: `
      local orphans = {}
      for _, threadId in ipairs(redis.call('HKEYS', KEYS[1])) do
        if redis.call('EXISTS', ARGV[1] .. threadId) == 0 then orphans[#orphans + 1] = threadId end
      end
      return orphans`,
  },
  /**
   * KEYS lock; ARGV sender, inbox key prefix, inbox length, inbox ttl, entry fields…. Appends the entry to the inbox
   * of the lock's holder and returns the holder; nil when nobody holds the lock, and the sender itself, appending
   * nothing, when it holds it. The inbox key is built here from the holder, which only this script reads: fine on
   * one Redis (Redis Cluster, which needs every key declared, is not supported).
   */
  cppSendToLockHolder: {
    numberOfKeys: 1,
    lua: `
      local held = redis.call('GET', KEYS[1])
      if not held then return false end
      local holder = string.match(held, '^%S+')
      if holder == ARGV[1] then return holder end
      local inbox = ARGV[2] .. holder
      redis.call('XADD', inbox, 'MAXLEN', '~', ARGV[3], '*', unpack(ARGV, 5))
      redis.call('PEXPIRE', inbox, ARGV[4])
      return holder`,
  },
} as const;

/** A connection that knows the lock scripts (sent once, then run by their SHA). */
export interface LockScripts {
  cppAcquireLock(
    lock: string,
    fence: string,
    generations: string,
    instance: string,
    ttlMs: number,
    threadId: string,
  ): Promise<number | null>;
  cppRenewLock(lock: string, fence: string, value: string, token: number, ttlMs: number): Promise<number>;
  cppStreamChunk(
    lock: string,
    fence: string,
    text: string,
    channel: string,
    value: string,
    token: number,
    delta: string,
    textTtlMs: number,
    message: string,
  ): Promise<number>;
  cppReleaseLock(
    lock: string,
    fence: string,
    generations: string,
    value: string,
    token: number,
    threadId: string,
  ): Promise<number>;
  cppOrphanedGenerations(generations: string, lockPrefix: string): Promise<string[]>;
  cppSendToLockHolder(
    lock: string,
    sender: string,
    inboxPrefix: string,
    inboxLength: number,
    inboxTtlMs: number,
    ...fields: string[]
  ): Promise<string | null>;
}

export function defineLockScripts(redis: Redis): Redis & LockScripts {
  for (const [name, script] of Object.entries(SCRIPTS)) redis.defineCommand(name, script);
  return redis as Redis & LockScripts;
}
