/**
 * Paces one answer's chunks. A delta goes out at once when the answer's previous chunk left at least `intervalMs`
 * ago; otherwise it waits, merged with whatever follows, until `intervalMs` after that chunk. So an answer's
 * subscribers get at most one `CPP_STREAM_CHUNK` per interval, no text waits longer than the interval, and the
 * first text of an answer is never held. Each chunk is one WebSocket frame, one write per subscriber: with
 * thousands of answers streaming tens of tokens a second, frames, not bytes, are what a server pays for.
 * An interval of 0 sends every delta as it comes.
 */
export class ChunkPacer {
  private pending = '';
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly send: (text: string) => void,
  ) {}

  /** The text waiting for its chunk. */
  get waiting(): string {
    return this.pending;
  }

  push(text: string): void {
    if (text.length === 0) return;
    this.pending += text;
    if (this.timer !== undefined) return;
    const wait = this.lastSentAt + this.intervalMs - performance.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /** Sends what waits, now: the answer ended by itself, and its end must follow all of its text. */
  flush(): void {
    this.cancelTimer();
    if (this.pending.length === 0) return;
    const text = this.pending;
    this.pending = '';
    this.lastSentAt = performance.now();
    this.send(text);
  }

  /** Drops what waits: a halted answer is what its clients were sent. */
  discard(): void {
    this.cancelTimer();
    this.pending = '';
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
