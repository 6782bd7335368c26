/** What a `ChunkClock` wakes. */
export interface Waker {
  wake(): void;
}

/**
 * One timer for every paced answer of the process, waking together those due in the same millisecond. A timer per
 * chunk per answer is tens of thousands of timers a second at a thousand streams, and Node drains its tick and
 * microtask queues after each one; woken together, answers' chunks leave in one run, and the writes' callbacks are
 * handled once after it.
 */
export class ChunkClock {
  private readonly due = new Map<number, Set<Waker>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  /** Wakes `waker` at `time` (`performance.now()`), or within the millisecond after it; returns the slot to cancel. */
  at(time: number, waker: Waker): number {
    const slot = Math.ceil(time);
    const wakers = this.due.get(slot);
    if (wakers) wakers.add(waker);
    else this.due.set(slot, new Set([waker]));
    if (slot < this.armedFor) this.arm(slot);
    return slot;
  }

  cancel(slot: number, waker: Waker): void {
    this.due.get(slot)?.delete(waker);
  }

  private arm(slot: number): void {
    clearTimeout(this.timer);
    this.armedFor = slot;
    this.timer = setTimeout(() => this.tick(), Math.max(0, slot - performance.now()));
  }

  private tick(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [slot, wakers] of this.due) {
      if (slot > now) {
        next = Math.min(next, slot);
        continue;
      }
      this.due.delete(slot);
      for (const waker of wakers) waker.wake();
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

/** The clock of every pacer that is not given one. */
export const chunkClock = new ChunkClock();
