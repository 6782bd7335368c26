/**
 * Milliseconds since the Unix epoch with sub-millisecond resolution. Comparable across processes on one machine,
 * which is how a client measures how late a token arrives that a server process scheduled.
 */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}
