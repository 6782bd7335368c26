import { FrameRateLimiter } from './frame-rate-limiter.js';

export type FrameAdmission = 'accepted' | 'dropped' | 'exceeded';

/** A whole burst's worth of dropped frames refills over this long (docs/PROTOCOL.md §23.6). */
const DROPS_REFILL_SECONDS = 10;

/** Dropped frames after the first are answered together, once per this interval (docs/PROTOCOL.md §23.6). */
export const DROP_REPORT_INTERVAL_MS = 1000;

/**
 * One connection's frame rate. Frames draw on a bucket of `burst` refilled at `perSecond`; a frame finding it empty is
 * dropped, and draws on a second bucket, of `burst` drops refilled over DROPS_REFILL_SECONDS: the drop finding that
 * one empty is `exceeded`. Frames accepted in between forgive nothing, so a flood paced to let a token refill between
 * its frames is closed like one sent at once (issue 36).
 */
export class FramePace {
  private readonly frames: FrameRateLimiter;
  private readonly drops: FrameRateLimiter;

  constructor(perSecond: number, burst: number, now?: () => number) {
    this.frames = new FrameRateLimiter(perSecond, burst, now);
    this.drops = new FrameRateLimiter(burst / DROPS_REFILL_SECONDS, burst, now);
  }

  take(): FrameAdmission {
    if (this.frames.take()) return 'accepted';
    return this.drops.take() ? 'dropped' : 'exceeded';
  }
}

/**
 * The answers to dropped frames, at most one per DROP_REPORT_INTERVAL_MS: the first drop after a quiet interval is
 * answered at once, later ones are counted and answered together when the interval ends. A flood of frames then
 * costs the server no frame of its own per frame (issue 36).
 */
export class DropReports {
  private unreported = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly report: (message: string) => void) {}

  dropped(limit: string): void {
    if (this.timer) {
      this.unreported += 1;
      return;
    }
    this.report(`frame dropped: ${limit}`);
    this.startInterval(limit);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private startInterval(limit: string): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.unreported === 0) return;
      const count = this.unreported;
      this.unreported = 0;
      this.report(`${count} more frames dropped in the last second: ${limit}`);
      this.startInterval(limit);
    }, DROP_REPORT_INTERVAL_MS);
    // A report still to come never keeps the process alive on its own.
    this.timer.unref();
  }
}
