import { performance } from 'node:perf_hooks';

/** What an import has done so far. */
export interface ImportCounts {
  bytesRead: number;
  /** The document's size in bytes. */
  size: number;
  /** Elements of the document read: conversations, or CPP exports. */
  items: number;
  elapsedMs: number;
}

const BAR_WIDTH = 24;
const MEGABYTE = 1024 * 1024;
/** A terminal redraws at most this often: a fast import reads thousands of conversations a second. */
const REDRAW_MS = 100;

/** One line of progress: a bar by bytes, the conversations read, the bytes, and the rate in conversations a second. */
export function progressLine({ bytesRead, size, items, elapsedMs }: ImportCounts): string {
  const share = size > 0 ? Math.min(1, bytesRead / size) : 0;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
  const rate = elapsedMs > 0 ? Math.round((items * 1000) / elapsedMs) : 0;
  const megabytes = (bytes: number) => (bytes / MEGABYTE).toFixed(bytes < 10 * MEGABYTE ? 1 : 0);
  return (
    `[${bar}] ${String(Math.floor(share * 100)).padStart(3)}%  ${items.toLocaleString('en')} conversations  ` +
    `${megabytes(bytesRead)}/${megabytes(size)} MB  ${rate.toLocaleString('en')}/s`
  );
}

/**
 * The progress of an import, drawn on one line of a terminal (`stream.isTTY`), redrawn at most every 100 ms; on
 * anything else (a pipe, a log file) nothing, so that logs hold only the result.
 */
export class ImportProgress {
  private readonly started: number;
  private drawnAt = Number.NEGATIVE_INFINITY;
  private drawn = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = now();
  }

  update(bytesRead: number, size: number, items: number): void {
    if (!this.stream.isTTY) return;
    const now = this.now();
    if (now - this.drawnAt < REDRAW_MS) return;
    this.drawnAt = now;
    this.drawn = true;
    this.stream.write(`\r${progressLine({ bytesRead, size, items, elapsedMs: now - this.started })}\x1b[K`);
  }

  /** Ends the line, so that what is printed next starts on its own. */
  end(): void {
    if (this.drawn) this.stream.write('\n');
  }
}
