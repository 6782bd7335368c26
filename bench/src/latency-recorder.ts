import { build, type Histogram } from 'hdr-histogram-js';

/** Latencies are recorded in microseconds: HDR histograms hold integers, and a microsecond is fine enough here. */
const MICROSECONDS_PER_MS = 1000;

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Latency samples in milliseconds, kept in an HDR histogram (3 significant digits, up to 10 minutes). */
export class LatencyRecorder {
  private readonly histogram: Histogram = build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000 * MICROSECONDS_PER_MS,
    numberOfSignificantValueDigits: 3,
  });

  record(milliseconds: number): void {
    this.histogram.recordValue(Math.max(1, Math.round(milliseconds * MICROSECONDS_PER_MS)));
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  percentile(percent: number): number {
    return this.histogram.getValueAtPercentile(percent) / MICROSECONDS_PER_MS;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      p50: this.percentile(50),
      p99: this.percentile(99),
      max: this.histogram.maxValue / MICROSECONDS_PER_MS,
    };
  }
}

/** The median of several runs' figures: what the report shows, since one run on a noisy machine proves little. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
