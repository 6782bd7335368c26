import { FrameRateLimiter } from './frame-rate-limiter.js';

const FIRST_SWEEP_AT = 1024;

/**
 * A token bucket per key (an identity): what one key may do however many connections it spreads its requests over.
 * Buckets that have refilled are forgotten when the map has doubled since the last sweep, since a new key gets a
 * full bucket anyway; so memory follows the keys active within one refill, and each sweep is paid for by as many
 * new keys.
 */
export class KeyedRateLimiter {
  private readonly buckets = new Map<string, FrameRateLimiter>();
  private sweepAt = FIRST_SWEEP_AT;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now?: () => number,
  ) {}

  /** Whether `key` may go ahead now; false when its bucket is empty. */
  take(key: string): boolean {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.sweepAt) this.sweep();
      bucket = new FrameRateLimiter(this.perSecond, this.burst, this.now);
      this.buckets.set(key, bucket);
    }
    return bucket.take();
  }

  /** Keys remembered now. */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(): void {
    for (const [key, bucket] of this.buckets) if (bucket.full) this.buckets.delete(key);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, 2 * this.buckets.size);
  }
}
