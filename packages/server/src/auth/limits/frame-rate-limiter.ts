export type FrameAdmission = 'accepted' | 'refused' | 'exceeded';

/** Module-level so that every connection's limiter shares it rather than holding a closure of its own. */
const performanceNow = () => performance.now();

/**
 * A token bucket per connection: `burst` frames at once, refilled at `perSecond`. A frame without a token is
 * refused; a client that goes on sending through a whole burst of refusals is `exceeded`, and is disconnected.
 */
export class FrameRateLimiter {
  private tokens: number;
  private refilledAt: number;
  private refusedInARow = 0;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = performanceNow,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  take(): FrameAdmission {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.refusedInARow = 0;
      return 'accepted';
    }
    this.refusedInARow += 1;
    return this.refusedInARow > this.burst ? 'exceeded' : 'refused';
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
