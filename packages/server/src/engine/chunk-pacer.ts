import { chunkClock, type ChunkClock, type Waker } from './chunk-clock.js';

/**
 * Paces one answer's chunks. A delta goes out at once when the answer's previous chunk left at least `intervalMs`
 * ago; otherwise it waits, merged with whatever follows, until `intervalMs` after that chunk (within the
 * millisecond: a `ChunkClock` wakes the answers due together). So an answer's subscribers get at most one
 * `CPP_STREAM_CHUNK` per interval, no text waits much longer than the interval, and the first text of an answer is
 * never held. Each chunk is one WebSocket frame, one write per subscriber: with thousands of answers streaming
 * tens of tokens a second, frames, not bytes, are what a server pays for. An interval of 0 sends every delta as it
 * comes.
 */
export class ChunkPacer implements Waker {
  private pending = '';
  private lastSentAt = Number.NEGATIVE_INFINITY;
  /** The clock's slot this pacer waits for, if it waits. */
  private slot: number | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly send: (text: string) => void,
    private readonly clock: ChunkClock = chunkClock,
  ) {}

  push(text: string): void {
    if (text.length === 0) return;
    this.pending += text;
    if (this.slot !== undefined) return;
    const dueAt = this.lastSentAt + this.intervalMs;
    if (dueAt <= performance.now()) this.flush();
    else this.slot = this.clock.at(dueAt, this);
  }

  /** The clock's call: the interval has passed. */
  wake(): void {
    this.slot = undefined;
    this.flush();
  }

  /** Sends what waits, now: the answer ended by itself, and its end must follow all of its text. */
  flush(): void {
    this.cancelWait();
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = '';
    this.lastSentAt = performance.now();
    this.send(text);
  }

  /** Drops what waits: a halted answer is what its clients were sent. */
  discard(): void {
    this.cancelWait();
    this.pending = '';
  }

  private cancelWait(): void {
    if (this.slot === undefined) return;
    this.clock.cancel(this.slot, this);
    this.slot = undefined;
  }
}
