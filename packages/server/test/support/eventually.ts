import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How long a test waits for an event (a frame, a state) before it fails naming what it waited for. Only a hang
 * reaches it: it is long enough for a machine busy with other work, and shorter than a test's own timeout, so that
 * its message is the one seen.
 */
export const WAIT_LIMIT_MS = 60_000;

/**
 * Resolves with the first defined result of `probe`, asked again every few milliseconds: for a state another
 * process or a timer produces (a batch persisted to a database file), which sends no event to wait for.
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  description: string,
  timeoutMs = WAIT_LIMIT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${description}`);
    await sleep(5);
  }
}
