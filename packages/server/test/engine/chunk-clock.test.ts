import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChunkClock } from '../../src/engine/chunk-clock.js';
import { ChunkPacer } from '../../src/engine/chunk-pacer.js';

describe('ChunkClock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('wakes every pacer due in the same millisecond with one timer, each pacer once', () => {
    const clock = new ChunkClock();
    const sent: string[] = [];
    const pacers = Array.from({ length: 100 }, (_, index) => new ChunkPacer(30, (text) => sent.push(`${index}:${text}`), clock));
    for (const pacer of pacers) pacer.push('a');
    vi.advanceTimersByTime(0.4);
    const timers = vi.spyOn(globalThis, 'setTimeout');
    for (const pacer of pacers) pacer.push('b');
    expect(timers).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(1);

    vi.advanceTimersByTime(30);
    expect(sent.filter((text) => text.endsWith(':b'))).toHaveLength(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('wakes later slots after earlier ones, each at its time, and forgets a cancelled wait', () => {
    const clock = new ChunkClock();
    const woken: string[] = [];
    const waker = (name: string) => ({ wake: () => woken.push(`${name}@${performance.now()}`) });
    const late = waker('late');
    clock.at(20, late);
    clock.at(5, waker('early'));
    const cancelled = waker('cancelled');
    clock.cancel(clock.at(10, cancelled), cancelled);
    clock.at(9.2, waker('rounded up'));

    vi.advanceTimersByTime(30);
    expect(woken).toEqual(['early@5', 'rounded up@10', 'late@20']);
  });
});
