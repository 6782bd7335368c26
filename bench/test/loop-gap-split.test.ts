import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { LoopGapWatch } from '../src/loop-gap-split.js';

const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
/** The main thread's time on a CPU so far, in ms. */
const onCpuMs = () => Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6;

describe('LoopGapWatch', () => {
  it.runIf(existsSync(SCHEDSTAT))(
    "splits the event loop's longest gap into the main thread's time on a CPU and its wait for one",
    async () => {
      const watch = new LoopGapWatch();
      watch.start();
      // A block of 40 ms of the thread's own CPU time, however long the machine makes it last.
      const from = onCpuMs();
      let spins = 0;
      while (onCpuMs() - from < 40) spins += 1;
      const ticksAfter = vi.fn();
      const ticker = setInterval(ticksAfter, 5);
      await vi.waitFor(() => expect(ticksAfter.mock.calls.length).toBeGreaterThanOrEqual(2));
      clearInterval(ticker);

      const split = watch.stop();

      expect(spins).toBeGreaterThan(0);
      expect(split!.maxOnCpuMs).toBeGreaterThanOrEqual(40);
      expect(split!.longestMs).toBeGreaterThanOrEqual(40);
      expect(split!.onCpuMs).toBeGreaterThanOrEqual(40);
      // What the gap was not on a CPU, it waited for one or slept; the kernel counts a wait when the thread next runs,
      // so a wait begun just before a tick may be counted in the gap after it (one tick at most).
      expect(split!.onCpuMs + split!.runQueueMs).toBeLessThanOrEqual(split!.longestMs + 5);
    },
  );
});
