import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DROP_REPORT_INTERVAL_MS, DropReports, FramePace } from '../../src/auth/limits/frame-pace.js';
import { FrameRateLimiter } from '../../src/auth/limits/frame-rate-limiter.js';
import { KeyedRateLimiter } from '../../src/auth/limits/keyed-rate-limiter.js';

describe('FrameRateLimiter', () => {
  it('takes a burst at once, then refills at the rate', () => {
    let now = 0;
    const limiter = new FrameRateLimiter(10, 3, () => now);
    expect([limiter.take(), limiter.take(), limiter.take(), limiter.take()]).toEqual([true, true, true, false]);
    now = 100;
    expect([limiter.take(), limiter.take()]).toEqual([true, false]);
    now = 10_000;
    expect([limiter.take(), limiter.take(), limiter.take(), limiter.take()]).toEqual([true, true, true, false]);
  });
});

describe('FramePace', () => {
  it('says exceeded once more than a burst was dropped, at once', () => {
    const pace = new FramePace(1, 2, () => 0);
    expect([pace.take(), pace.take(), pace.take(), pace.take(), pace.take()]).toEqual([
      'accepted',
      'accepted',
      'dropped',
      'dropped',
      'exceeded',
    ]);
  });

  it('forgives no drop for the frames accepted in between: a flood paced to a token per frame is exceeded', () => {
    let now = 0;
    // 100 per second, bursts of 200: the flood sends 18 frames per 10 ms, one of which finds a fresh token.
    const pace = new FramePace(100, 200, () => now);
    const admissions: string[] = [];
    while (!admissions.includes('exceeded')) {
      now += 10;
      for (let frame = 0; frame < 18; frame += 1) admissions.push(pace.take());
    }
    // Past the first burst, every 10 ms brings a token: accepted frames run all through the drops.
    expect(admissions.lastIndexOf('accepted')).toBeGreaterThan(admissions.indexOf('dropped') + 100);
    expect(now).toBeLessThan(1000);
  });

  it('lets drops refill over ten seconds: a whole burst of them, then a burst more ten seconds on', () => {
    let now = 0;
    const pace = new FramePace(1, 2, () => now);
    pace.take();
    pace.take();
    expect([pace.take(), pace.take()]).toEqual(['dropped', 'dropped']);
    now = 10_000;
    // The frame bucket has refilled too: ten tokens' worth, capped at a burst of 2.
    expect([pace.take(), pace.take(), pace.take(), pace.take(), pace.take()]).toEqual([
      'accepted',
      'accepted',
      'dropped',
      'dropped',
      'exceeded',
    ]);
  });
});

describe('DropReports', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('answers the first drop at once and the rest once a second, with how many there were', () => {
    const reports: string[] = [];
    const drops = new DropReports((message) => reports.push(message));
    for (let index = 0; index < 50; index += 1) drops.dropped('the limit');
    expect(reports).toEqual(['frame dropped: the limit']);
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    expect(reports).toEqual(['frame dropped: the limit', '49 more frames dropped in the last second: the limit']);
    drops.dropped('the limit');
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    expect(reports.at(-1)).toBe('1 more frames dropped in the last second: the limit');
    // A quiet second ends the interval: the next drop is answered at once again.
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    drops.dropped('the limit');
    expect(reports.at(-1)).toBe('frame dropped: the limit');
    drops.dropped('the limit');
    drops.stop();
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    expect(reports).toHaveLength(4);
  });
});

describe('KeyedRateLimiter', () => {
  it('gives each key its own bucket, and forgets the refilled ones once there are many keys', () => {
    let now = 0;
    const limiter = new KeyedRateLimiter(1, 2, () => now);
    expect([limiter.take('alice'), limiter.take('alice'), limiter.take('alice'), limiter.take('bob')]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    for (let index = 0; index < 1022; index += 1) limiter.take(`did:key:z${index}`);
    expect(limiter.size).toBe(1024);
    now = 2000;
    limiter.take('carol');
    expect(limiter.size).toBe(1);
    expect([limiter.take('alice'), limiter.take('alice'), limiter.take('alice')]).toEqual([true, true, false]);
  });
});
