import { ChunkPacer } from '../../src/engine/chunk-pacer.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** A pacer whose chunks are recorded with the (fake) time they left. */
function recordingPacer(intervalMs: number) {
  const sent: Array<{ text: string; at: number }> = [];
  const pacer = new ChunkPacer(intervalMs, (text) => sent.push({ text, at: performance.now() }));
  return { pacer, sent };
}

describe('ChunkPacer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the first text at once', () => {
    const { pacer, sent } = recordingPacer(40);
    pacer.push('Hello');
    expect(sent).toEqual([{ text: 'Hello', at: 0 }]);
  });

  it('merges text arriving within the interval into one chunk, sent one interval after the previous one', () => {
    const { pacer, sent } = recordingPacer(40);
    pacer.push('A');
    vi.advanceTimersByTime(10);
    pacer.push('B');
    vi.advanceTimersByTime(10);
    pacer.push('C');
    expect(sent.map((chunk) => chunk.text)).toEqual(['A']);
    vi.advanceTimersByTime(19);
    expect(sent.map((chunk) => chunk.text)).toEqual(['A']);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([
      { text: 'A', at: 0 },
      { text: 'BC', at: 40 },
    ]);
  });

  it('never holds text longer than the interval, nor sends two chunks closer than it', () => {
    const { pacer, sent } = recordingPacer(40);
    // A model at 50 tokens/s: one token every 20 ms, for two seconds.
    const pushedAt: number[] = [];
    for (let token = 0; token < 100; token += 1) {
      pushedAt.push(performance.now());
      pacer.push(`${token} `);
      vi.advanceTimersByTime(20);
    }
    vi.advanceTimersByTime(40);
    expect(sent.map((chunk) => chunk.text).join('')).toBe(
      Array.from({ length: 100 }, (_, token) => `${token} `).join(''),
    );
    expect(sent.length).toBeLessThanOrEqual(51);
    for (let index = 1; index < sent.length; index += 1)
      expect(sent[index]!.at - sent[index - 1]!.at).toBeGreaterThanOrEqual(40);
    let token = 0;
    for (const chunk of sent) {
      for (const _ of chunk.text.trim().split(' ')) {
        expect(chunk.at - pushedAt[token]!).toBeLessThanOrEqual(40);
        token += 1;
      }
    }
  });

  it('sends text at once when the previous chunk left an interval ago or more', () => {
    const { pacer, sent } = recordingPacer(40);
    pacer.push('A');
    vi.advanceTimersByTime(45);
    pacer.push('B');
    expect(sent).toEqual([
      { text: 'A', at: 0 },
      { text: 'B', at: 45 },
    ]);
  });

  it('flush sends what waits now, and nothing is sent again at the timer', () => {
    const { pacer, sent } = recordingPacer(40);
    pacer.push('A');
    pacer.push('B');
    vi.advanceTimersByTime(5);
    pacer.flush();
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([
      { text: 'A', at: 0 },
      { text: 'B', at: 5 },
    ]);
  });

  it('discard drops what waits: it is never sent', () => {
    const { pacer, sent } = recordingPacer(40);
    pacer.push('A');
    pacer.push('B');
    pacer.discard();
    vi.advanceTimersByTime(100);
    pacer.flush();
    expect(sent.map((chunk) => chunk.text)).toEqual(['A']);
  });

  it('with an interval of 0 sends every text as it comes, and ignores empty text', () => {
    const { pacer, sent } = recordingPacer(0);
    pacer.push('A');
    pacer.push('');
    pacer.push('B');
    expect(sent.map((chunk) => chunk.text)).toEqual(['A', 'B']);
  });
});
