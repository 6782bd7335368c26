import { setTimeout as sleep } from 'node:timers/promises';
import { monotonicNow } from './clock.js';

/**
 * Tokens on a fixed schedule: the first at once, token i at start + i × interval. A late token therefore shows as
 * delay instead of pushing the whole schedule back. Each token's text is the time it was due on the monotonic clock, so that a
 * client can measure how late it arrived; it is about as long as a few words of a real answer.
 */
export async function* pacedTokens(intervalMs: number, limit: number, signal: AbortSignal): AsyncGenerator<string> {
  const start = monotonicNow();
  for (let index = 0; index < limit; index += 1) {
    const due = start + index * intervalMs;
    const wait = due - monotonicNow();
    if (wait > 0) await sleep(wait, undefined, { signal });
    signal.throwIfAborted();
    yield `${index === 0 ? '' : ' '}${due.toFixed(2)}`;
  }
}

/** The monotonic time a paced token was due, read back from its text. */
export function dueTimeOf(token: string): number {
  return Number(token);
}
