import { readFileSync } from 'node:fs';

/** The longest gap between two ticks of the watch's timer, and what the main thread did in it. */
export interface LoopGapSplit {
  /** The longest gap between two ticks, in ms (a tick is due every TICK_MS). */
  longestMs: number;
  /** How much of it the main thread ran on a CPU: the code's work, garbage collection included. */
  onCpuMs: number;
  /** How much of it the main thread was ready to run and waited for a CPU that other processes held. */
  runQueueMs: number;
  /**
   * The most time on a CPU in any gap: the code's longest work, whichever gap it fell in, give or take the short turns
   * that share a tick with it (at most one tick's worth).
   */
  maxOnCpuMs: number;
}

const TICK_MS = 5;
const NS_PER_MS = 1e6;
/** Linux's counters of the main thread (its id is the process's): ns on a CPU, ns waiting in the run queue. */
const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;

function schedstat(): [onCpu: number, runQueue: number] | undefined {
  try {
    const [onCpu, runQueue] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number);
    return [onCpu!, runQueue!];
  } catch {
    return undefined;
  }
}

/**
 * Splits the event loop's blocks into the main thread's own work and its waits for a CPU. On a shared machine a gap
 * between two turns of the loop is both: in the scale section at load averages of 6–17, merge steps of 2–3 ms of CPU
 * showed as gaps of 10–94 ms. `monitorEventLoopDelay` gives the gaps; this gives their split (Linux only: elsewhere
 * `stop()` gives undefined).
 */
export class LoopGapWatch {
  private timer: NodeJS.Timeout | undefined;
  private split: LoopGapSplit = { longestMs: 0, onCpuMs: 0, runQueueMs: 0, maxOnCpuMs: 0 };

  start(): void {
    let last = { at: performance.now(), counters: schedstat() };
    if (!last.counters) return;
    this.timer = setInterval(() => {
      const now = { at: performance.now(), counters: schedstat()! };
      const gapMs = now.at - last.at;
      const onCpuMs = (now.counters[0] - last.counters![0]) / NS_PER_MS;
      const runQueueMs = (now.counters[1] - last.counters![1]) / NS_PER_MS;
      if (gapMs > this.split.longestMs) this.split = { ...this.split, longestMs: gapMs, onCpuMs, runQueueMs };
      this.split.maxOnCpuMs = Math.max(this.split.maxOnCpuMs, onCpuMs);
      last = now;
    }, TICK_MS);
  }

  stop(): LoopGapSplit | undefined {
    if (!this.timer) return undefined;
    clearInterval(this.timer);
    return this.split;
  }
}
