import { monotonicNow } from './clock.js';

/**
 * Tokens on a fixed schedule: the first at once, token i at start + i × interval. A late token therefore shows as
 * delay instead of pushing the whole schedule back. Each token's text is the time it was due on the monotonic clock
 * (or it left, if that was earlier), after a space but for the first, so that a client can measure how late it
 * arrived, however many tokens one chunk carries; it is about as long as a few words of a real answer.
 *
 * An abort is seen at the stream's next token (within one interval): the server under test stops sending at once
 * on its side, whatever its model does on the way out.
 */
export async function* pacedTokens(intervalMs: number, limit: number, signal: AbortSignal): AsyncGenerator<string> {
  const start = monotonicNow();
  for (let index = 0; index < limit; index += 1) {
    const due = start + index * intervalMs;
    // Even a late token waits for the loop's next turn: a model's text reaches a server as I/O, one event-loop
    // turn at a time. A late stream catching up in one run of microtasks would never let a loaded server's loop
    // turn (its sockets never drained, its write callbacks piled up by the million, its heap grew until it died).
    await paceClock.until(due);
    signal.throwIfAborted();
    // A timer counts from the event loop's cached time, which lags the clock: it often fires a little before `due`.
    // Such a token carries the time it left instead, or its delay would show as less than it was (even below zero).
    yield `${index === 0 ? '' : ' '}${Math.min(due, monotonicNow()).toFixed(2)}`;
  }
}

/**
 * One timer for every paced stream of the process, waking together the streams whose tokens fall due in the same
 * millisecond, and one `setImmediate` for the tokens already due. A timer (and an abort listener) per stream per
 * token would be 100,000 of each a second at 2,000 streams: the bench's own model, charged to the server it
 * measures. Real model streams reach a server as socket reads, many per tick, not as timers.
 */
class PaceClock {
  private readonly waiting = new Map<number, Array<() => void>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  /** The streams whose token is due already, woken at the loop's next turn. */
  private due: Array<() => void> | undefined;

  /**
   * Settles at `due` (a monotonic time), within the millisecond; at the loop's next turn when that millisecond has
   * come. Not with a timer then: Node waits at least 1 ms for any timer, which made every answer's first token
   * (due at once) 1–1.3 ms late, a model's delay counted in the server's time to its first chunk.
   */
  until(due: number): Promise<void> {
    const slot = Math.floor(due);
    return new Promise((resolve) => {
      if (slot <= monotonicNow()) return this.nextTurn(resolve);
      const streams = this.waiting.get(slot);
      if (streams) streams.push(resolve);
      else this.waiting.set(slot, [resolve]);
      this.arm(slot);
    });
  }

  private nextTurn(resolve: () => void): void {
    if (this.due) return void this.due.push(resolve);
    this.due = [resolve];
    setImmediate(() => {
      const streams = this.due ?? [];
      this.due = undefined;
      for (const wake of streams) wake();
    });
  }

  private arm(slot: number): void {
    if (slot >= this.armedFor) return;
    clearTimeout(this.timer);
    this.armedFor = slot;
    this.timer = setTimeout(() => this.wake(), Math.max(0, slot - monotonicNow()));
  }

  private wake(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = monotonicNow();
    let next = Number.POSITIVE_INFINITY;
    for (const [slot, streams] of this.waiting) {
      if (slot <= now) {
        this.waiting.delete(slot);
        for (const resolve of streams) resolve();
      } else next = Math.min(next, slot);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

const paceClock = new PaceClock();

/** The due times of the paced tokens a chunk's text carries. */
export function dueTimesOf(delta: string): number[] {
  return delta
    .split(' ')
    .filter((token) => token.length > 0)
    .map(Number);
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const DOT = 0x2e;
const SPACE = 0x20;

/**
 * Reads the due times of paced tokens straight from a frame's UTF-8 bytes (or its text, as a Socket.IO client gets
 * it), from `from` to the first character that is not part of them (the delta's closing quote), and calls `visit`
 * with each; returns how many. The load generator reads every chunk of thousands of streams: decoding and parsing
 * each frame as JSON would cost it several times more CPU than this.
 */
export function readDueTimes(frame: Uint8Array | string, from: number, visit: (due: number) => void): number {
  const text = typeof frame === 'string';
  let tokens = 0;
  let digits = 0;
  /** 0 before the decimal point, then 10^(digits after it). */
  let scale = 0;
  let inToken = false;
  for (let index = from; ; index += 1) {
    // Past the end: NaN from a string, undefined from bytes; either ends the tokens.
    const byte = (text ? frame.charCodeAt(index) : frame[index]) || -1;
    if (byte >= DIGIT_0 && byte <= DIGIT_9) {
      digits = digits * 10 + (byte - DIGIT_0);
      if (scale > 0) scale *= 10;
      inToken = true;
    } else if (byte === DOT) {
      scale = 1;
    } else {
      if (inToken) {
        visit(scale > 0 ? digits / scale : digits);
        tokens += 1;
      }
      if (byte !== SPACE) return tokens;
      digits = 0;
      scale = 0;
      inToken = false;
    }
  }
}
