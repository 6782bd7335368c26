/**
 * Runs tasks one at a time in the order they were queued. Each thread has one, so frames about a thread apply in
 * the order received while different threads proceed independently.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
