import { MemoryReplayCache } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';

describe('MemoryReplayCache', () => {
  it('takes a nonce once', () => {
    const cache = new MemoryReplayCache(() => 0);
    expect(cache.use('nonce-a', 1000)).toBe(true);
    expect(cache.use('nonce-a', 1000)).toBe(false);
    expect(cache.use('nonce-b', 1000)).toBe(true);
  });

  it('forgets nonces once they expire, so that it stays small', () => {
    let now = 0;
    const cache = new MemoryReplayCache(() => now);
    for (let index = 0; index < 100; index += 1) cache.use(`nonce-${index}`, 1000 + index);
    now = 1050;
    cache.use('later', 5000);
    expect(cache.size).toBe(50);
  });
});
