/**
 * Ids are opaque to the protocol but their shape is checked at the edge: a prefix, then 1–100 characters of
 * `[A-Za-z0-9_-]`. Generated ids use a ULID so that they sort by creation time: monotonic, so that two ids
 * made in the same millisecond sort in the order they were made too (a thread list's ties are broken by id). The
 * generator is a few lines of this module rather than the `ulid` package, which is most of its size in a page.
 */
const ID_BODY = '[A-Za-z0-9_-]{1,100}';

export const MESSAGE_ID_PATTERN = new RegExp(`^msg_${ID_BODY}$`);
export const THREAD_ID_PATTERN = new RegExp(`^thread_${ID_BODY}$`);
export const TOOL_CALL_ID_PATTERN = new RegExp(`^call_${ID_BODY}$`);
export const ATTACHMENT_ID_PATTERN = new RegExp(`^att_${ID_BODY}$`);

export function newMessageId(): string {
  return `msg_${nextUlid()}`;
}

export function newThreadId(): string {
  return `thread_${nextUlid()}`;
}

/** A tool call's id: the server's own for every call, whatever id the model's vendor gave it (§26.1). */
export function newToolCallId(): string {
  return `call_${nextUlid()}`;
}

export function newAttachmentId(): string {
  return `att_${nextUlid()}`;
}

/** Crockford's base32, as ULIDs are written (https://github.com/ulid/spec). */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_DIGITS = 10;
const RANDOM_DIGITS = 16;

/** Random bytes drawn from the platform's cryptographic source a pool at a time: ids are made on every prompt. */
const randomPool = new Uint8Array(4096);
let randomUsed = randomPool.length;

function randomDigit(): number {
  if (randomUsed === randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomUsed = 0;
  }
  // 256 is a multiple of 32, so the low five bits of a uniform byte are a uniform digit.
  return randomPool[randomUsed++]! & 31;
}

let lastTime = -1;
const lastRandom = new Uint8Array(RANDOM_DIGITS);

/**
 * A monotonic ULID, as the spec's monotonicity section describes: within one millisecond (or while the clock runs
 * back), the random part of the last id plus one, so that ids always sort in the order they were made.
 */
function nextUlid(): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    for (let index = 0; index < RANDOM_DIGITS; index += 1) lastRandom[index] = randomDigit();
  } else incrementRandom();
  let text = '';
  for (let time = lastTime, index = 0; index < TIME_DIGITS; index += 1, time = Math.floor(time / 32))
    text = CROCKFORD[time % 32] + text;
  for (const digit of lastRandom) text += CROCKFORD[digit];
  return text;
}

function incrementRandom(): void {
  for (let index = RANDOM_DIGITS - 1; index >= 0; index -= 1) {
    if (lastRandom[index]! < 31) return void (lastRandom[index]! += 1);
    lastRandom[index] = 0;
  }
  throw new RangeError('more than 2^80 ids in one millisecond');
}

export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && MESSAGE_ID_PATTERN.test(value);
}

export function isThreadId(value: unknown): value is string {
  return typeof value === 'string' && THREAD_ID_PATTERN.test(value);
}
