/** What is open per key (connections per IP address or DID, answers being written per identity), for the per-key limits. */
export class ConnectionCounter {
  private readonly counts = new Map<string, number>();

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Counts one more connection of `key`; the returned function uncounts it, once however often it is called. */
  acquire(key: string): () => void {
    this.counts.set(key, this.count(key) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const remaining = this.count(key) - 1;
      if (remaining > 0) this.counts.set(key, remaining);
      else this.counts.delete(key);
    };
  }
}
