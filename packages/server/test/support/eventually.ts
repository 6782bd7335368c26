import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves with the first defined result of `probe`, asked again every few milliseconds: for a state another
 * process or a timer produces (a batch persisted to a database file), which sends no event to wait for.
 */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, description: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${description}`);
    await sleep(5);
  }
}
