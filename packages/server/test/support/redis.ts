import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe } from 'vitest';

/** The machines that run the tests have Redis there; `.ci/run` starts it when it is down. */
export const TEST_REDIS_URL = process.env.CPP_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const unreachable = await findWhyUnreachable();

/**
 * A describe block of tests that need Redis. Without it they are skipped, saying why, except in CI (`CI` set), where
 * the missing Redis is an error: a broken machine must fail the run, not pass it with tests left out.
 */
export function describeWithRedis(name: string, body: () => void): void;
/** The same, its tests run at once (`{ concurrent: true }`), as Vitest's `describe(name, options, body)`. */
export function describeWithRedis(name: string, options: { concurrent: boolean }, body: () => void): void;
export function describeWithRedis(name: string, ...rest: [() => void] | [{ concurrent: boolean }, () => void]): void {
  const [options, body] = rest.length === 1 ? [{}, rest[0]] : rest;
  if (unreachable === undefined) {
    describe(name, options, body);
  } else if (process.env.CI) {
    throw new Error(`Redis is needed in CI and is not reachable at ${TEST_REDIS_URL}: ${unreachable}`);
  } else {
    const reason = `Redis is not reachable at ${TEST_REDIS_URL}: ${unreachable}`;
    console.warn(`Skipping "${name}": ${reason}. Start it with: redis-server --daemonize yes --port 6379`);
    describe.skip(`${name} (skipped: ${reason})`, body);
  }
}

/** A key prefix no other test run uses. */
export function uniqueRedisPrefix(): string {
  return `cpp_test_${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

async function findWhyUnreachable(): Promise<string | undefined> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5_000,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    redis.disconnect();
  }
}
