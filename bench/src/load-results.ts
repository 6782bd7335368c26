import type { LatencySummary } from './latency-recorder.js';
import type { LoadTarget } from './load-target.js';

/** What the load generator is asked to start, and what it answers (it runs in its own process: types only there). */
export interface StreamsRequest extends LoadTarget {
  count: number;
  /** The streams' models start evenly spread over at least this long (the longer of the token and chunk intervals). */
  spreadMs: number;
}

export interface StreamsStarted {
  started: number;
  failed: number;
  /** Why the others did not start (the first line of each error), with how many each. */
  failures: Record<string, number>;
  /** From the request to the last first chunk (or the deadline). */
  startMs: number;
  /**
   * The largest share of the started streams whose tokens fall due in one same millisecond of `spreadMs` (even:
   * 1 / spreadMs). Streams all due at once would load the server in bursts that a real crowd of clients does not.
   */
  samePhaseShare: number;
}

export interface TokenDelays extends LatencySummary {
  /** Tokens that arrived in the window, against what the streams' pace promises; `count` is the same. */
  received: number;
  expected: number;
  /** Chunks (frames) that carried them: a paced server merges tokens that come less than its interval apart. */
  frames: number;
  framesPerStreamPerSecond: number;
  /** The load generator's CPU use in the window, in percent of one core: near 100, the figures would measure it. */
  loadCpuPercent: number;
}

/** E.g. "277 of 999 streams started in 60.0 s; the others: connected, no first chunk within 60 s × 700, …". */
export function describeStart(start: StreamsStarted): string {
  const total = start.started + start.failed;
  const reasons = Object.entries(start.failures).map(([reason, count]) => `${reason} × ${count}`);
  return `${start.started} of ${total} streams started in ${(start.startMs / 1000).toFixed(1)} s${reasons.length > 0 ? `; the others: ${reasons.join(', ')}` : ''}`;
}
