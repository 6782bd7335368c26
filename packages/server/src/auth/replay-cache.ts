/**
 * Remembers the nonces already used until they expire, so that a proof is accepted once only. Synchronous on
 * purpose: a proof is settled before the next frame of its connection is read, so a client may send its first
 * thread frame right behind it. (A nonce is bound to its connection, so a cluster needs no shared cache.)
 */
export interface ReplayCache {
  /** Records `nonce` as used until `expiresAt` (ms since the epoch); false when it was already used. */
  use(nonce: string, expiresAt: number): boolean;
}

/**
 * The replay cache of one process. Entries leave once expired (an expired nonce is refused for its expiry anyway),
 * swept on insertion, so memory stays bounded by the proofs of the last challenge lifetime.
 */
export class MemoryReplayCache implements ReplayCache {
  private readonly used = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.used.size;
  }

  use(nonce: string, expiresAt: number): boolean {
    this.sweep();
    if (this.used.has(nonce)) return false;
    this.used.set(nonce, expiresAt);
    return true;
  }

  /** Map order is insertion order and lifetimes are nearly equal, so the expired entries are at the front. */
  private sweep(): void {
    const now = this.now();
    for (const [nonce, expiresAt] of this.used) {
      if (expiresAt > now) break;
      this.used.delete(nonce);
    }
  }
}
