/** Module-level so that every connection's limiter shares it rather than holding a closure of its own. */
const performanceNow = () => performance.now();

/** A token bucket: `burst` takes at once, refilled at `perSecond`; a take without a token is refused. */
export class FrameRateLimiter {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = performanceNow,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** Whether a token was there to take. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whether the bucket is back to a whole burst: as good as a new one. */
  get full(): boolean {
    this.refill();
    return this.tokens >= this.burst;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.perSecond) / 1000);
    this.refilledAt = now;
  }
}
