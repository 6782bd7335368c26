import { setTimeout as sleep } from 'node:timers/promises';
import { isUnreachable } from '../unreachable.js';

/** The wait before the first retry, doubled after each failure up to the longest. */
export interface RetrySchedule {
  firstDelayMs: number;
  maxDelayMs: number;
}

/** An answer's end reaches the store at most 2 s after the store is back. */
export const COMMIT_RETRY_SCHEDULE: RetrySchedule = { firstDelayMs: 250, maxDelayMs: 2000 };

export interface CommitRetryOptions {
  /** False once the commit is no longer this server's to make (another server took the answer over). */
  wanted(): boolean;
  /** An attempt failed with the store unreachable; the next one is `delayMs` away. */
  onRetry(error: unknown, delayMs: number): void;
  schedule?: RetrySchedule;
}

/**
 * Runs `commit` until it goes through, for a commit that nobody waits for and that no later frame would make again:
 * the end of an answer that ended by itself. While the store cannot be reached (a database restart, a network cut)
 * the commit is tried again with backoff; any other failure is final and thrown. Nothing is held between attempts:
 * `commit` takes its turn in the thread's queue each time, so that the thread's other frames run (and fail fast)
 * meanwhile.
 */
export async function commitUntilStored(commit: () => Promise<void>, options: CommitRetryOptions): Promise<void> {
  const { firstDelayMs, maxDelayMs } = options.schedule ?? COMMIT_RETRY_SCHEDULE;
  for (let delayMs = firstDelayMs; ; delayMs = Math.min(delayMs * 2, maxDelayMs)) {
    try {
      return await commit();
    } catch (error) {
      if (!isUnreachable(error) || !options.wanted()) throw error;
      options.onRetry(error, delayMs);
    }
    // Unreferenced: a server that closes meanwhile is not kept alive by an answer it can no longer end.
    await sleep(delayMs, undefined, { ref: false });
    if (!options.wanted()) return;
  }
}
