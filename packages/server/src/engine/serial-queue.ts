const SETTLED: Promise<unknown> = Promise.resolve();

/**
 * Runs tasks one at a time in the order they were queued. Each thread has one, so frames about a thread apply in
 * the order received while different threads proceed independently.
 */
export class SerialQueue {
  /** Until the first task, the promise every queue shares: each connection and each open thread has a queue. */
  private tail: Promise<unknown> = SETTLED;
  private closedWith: Error | undefined;

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(() => {
      if (this.closedWith) throw this.closedWith;
      return task();
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Every task that has not started yet, and every later one, fails with `error` instead of running. */
  close(error: Error): void {
    this.closedWith = error;
  }
}
