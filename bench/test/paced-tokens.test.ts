import { encodeServerFrame } from '@promethea/cpp-protocol';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { monotonicNow } from '../src/clock.js';
import { dueTimesOf, pacedTokens, readDueTimes } from '../src/paced-tokens.js';

/** A chunk as both servers encode it, and where its delta begins. */
function chunkBytes(delta: string): { bytes: Buffer; from: number } {
  const text = encodeServerFrame('CPP_STREAM_CHUNK', { threadId: 'thr_1', nodeId: 'msg_1', offset: 0, delta });
  return { bytes: Buffer.from(text), from: text.indexOf('"delta":"') + '"delta":"'.length };
}

async function tokens(count: number): Promise<string[]> {
  const texts: string[] = [];
  for await (const text of pacedTokens(1, count, new AbortController().signal)) texts.push(text);
  return texts;
}

describe('paced tokens', () => {
  it('reads every due time of a chunk that merged several tokens, straight from the frame bytes', async () => {
    const texts = await tokens(4);
    const expected = texts.map(Number);
    const { bytes, from } = chunkBytes(texts.join(''));
    const read: number[] = [];
    expect(readDueTimes(bytes, from, (due) => read.push(due))).toBe(4);
    for (const [index, due] of read.entries()) expect(due).toBeCloseTo(expected[index]!, 6);
    expect(dueTimesOf(texts.join(''))).toEqual(expected);
  });

  it('reads a chunk that starts after the first token (a leading space) and one of a single token', async () => {
    const texts = await tokens(3);
    for (const delta of [texts[1]!, texts[0]!, texts.slice(1).join('')]) {
      const { bytes, from } = chunkBytes(delta);
      const read: number[] = [];
      const count = readDueTimes(bytes, from, (due) => read.push(due));
      expect(count).toBe(dueTimesOf(delta).length);
      for (const [index, due] of read.entries()) expect(due).toBeCloseTo(dueTimesOf(delta)[index]!, 6);
    }
  });

  it('schedules token i at start + i × interval, never stamped later than it left', async () => {
    const stamps: number[] = [];
    for await (const text of pacedTokens(2, 50, new AbortController().signal)) {
      // A timer may fire before the token is due: the token then carries the time it left.
      expect(Number(text)).toBeLessThanOrEqual(monotonicNow());
      stamps.push(Number(text));
    }
    stamps.forEach((stamp, index) => {
      expect(stamp - stamps[0]!).toBeLessThanOrEqual(index * 2 + 1e-6);
      if (index > 0) expect(stamp).toBeGreaterThan(stamps[index - 1]!);
    });
  });

  it('paces many streams with one timer between them, every stream keeping its schedule', async () => {
    const streams = 300;
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    let most = 0;
    const stamps = await Promise.all(
      Array.from({ length: streams }, async () => {
        const own: number[] = [];
        for await (const text of pacedTokens(3, 20, new AbortController().signal)) {
          own.push(Number(text));
          most = Math.max(most, timers() - before);
        }
        return own;
      }),
    );
    expect(most).toBeLessThanOrEqual(1);
    for (const own of stamps) {
      expect(own).toHaveLength(20);
      for (const [index, stamp] of own.entries()) if (index > 0) expect(stamp).toBeGreaterThan(own[index - 1]!);
    }
  });

  it("yields a token due at once at the loop's next turn, not after a timer (Node waits 1 ms for any)", async () => {
    // Were a timer to pace it, the token would never come: no fake timer is run here.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      // A timer the stream armed all the same fires now, or the streams of later tests would wait for it.
      vi.runOnlyPendingTimers();
      vi.useRealTimers();
    });
    const stream = pacedTokens(1000, 2, new AbortController().signal);
    let first: string | undefined;
    void stream.next().then((result) => (first = result.value as string));
    await new Promise((resolve) => setImmediate(resolve));
    expect(Number(first)).toBeLessThanOrEqual(monotonicNow());
    await stream.return(undefined);
  });

  it('lets the event loop turn between tokens, late ones too', async () => {
    let turns = 0;
    let spinning = true;
    const spin = (): void => {
      turns += 1;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const seen: number[] = [];
    for await (const _ of pacedTokens(1, 20, new AbortController().signal)) {
      if (seen.length === 0) {
        // Hold the loop: every later token is then late.
        const until = performance.now() + 30;
        while (performance.now() < until);
      }
      seen.push(turns);
    }
    spinning = false;
    for (let index = 2; index < seen.length; index += 1) expect(seen[index]!).toBeGreaterThan(seen[index - 1]!);
  });

  it('ends a stream at its next token once aborted', async () => {
    const controller = new AbortController();
    const texts: string[] = [];
    await expect(
      (async () => {
        for await (const text of pacedTokens(5, 1000, controller.signal)) {
          texts.push(text);
          if (texts.length === 3) controller.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(texts).toHaveLength(3);
  });
});
