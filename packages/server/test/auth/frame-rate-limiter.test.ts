import { describe, expect, it } from 'vitest';
import { FrameRateLimiter } from '../../src/auth/limits/frame-rate-limiter.js';
import { KeyedRateLimiter } from '../../src/auth/limits/keyed-rate-limiter.js';

describe('FrameRateLimiter', () => {
  it('takes a burst at once, then refills at the rate', () => {
    let now = 0;
    const limiter = new FrameRateLimiter(10, 3, () => now);
    expect([limiter.take(), limiter.take(), limiter.take(), limiter.take()]).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'refused',
    ]);
    now = 100;
    expect([limiter.take(), limiter.take()]).toEqual(['accepted', 'refused']);
    now = 10_000;
    expect([limiter.take(), limiter.take(), limiter.take(), limiter.take()]).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'refused',
    ]);
  });

  it('says exceeded once more frames than a burst were refused in a row, and forgives after an accepted one', () => {
    let now = 0;
    const limiter = new FrameRateLimiter(1, 2, () => now);
    limiter.take();
    limiter.take();
    expect([limiter.take(), limiter.take()]).toEqual(['refused', 'refused']);
    now = 1000;
    expect(limiter.take()).toBe('accepted');
    expect([limiter.take(), limiter.take(), limiter.take()]).toEqual(['refused', 'refused', 'exceeded']);
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
