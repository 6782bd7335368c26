import { monotonicFactory } from 'ulid';

/**
 * Ids are opaque to the protocol but their shape is checked at the edge: a prefix, then 1–100 characters of
 * `[A-Za-z0-9_-]`. Generated ids use a ULID so that they sort by creation time: monotonic, so that two ids
 * made in the same millisecond sort in the order they were made too (a thread list's ties are broken by id).
 */
const ID_BODY = '[A-Za-z0-9_-]{1,100}';

export const MESSAGE_ID_PATTERN = new RegExp(`^msg_${ID_BODY}$`);
export const THREAD_ID_PATTERN = new RegExp(`^thread_${ID_BODY}$`);

export function newMessageId(): string {
  return `msg_${nextUlid()}`;
}

export function newThreadId(): string {
  return `thread_${nextUlid()}`;
}

/**
 * ulid's own PRNG looks up `crypto` and draws one byte per character, 16 calls per id: about 30 times slower than
 * drawing the same cryptographic bytes from a pool, and ids are made on every prompt and pivot.
 */
const randomPool = new Uint8Array(4096);
let randomUsed = randomPool.length;

function randomFraction(): number {
  if (randomUsed === randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomUsed = 0;
  }
  return randomPool[randomUsed++]! / 256;
}

const nextUlid = monotonicFactory(randomFraction);

export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && MESSAGE_ID_PATTERN.test(value);
}

export function isThreadId(value: unknown): value is string {
  return typeof value === 'string' && THREAD_ID_PATTERN.test(value);
}
