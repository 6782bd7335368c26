/**
 * Milliseconds on the system's monotonic clock (CLOCK_MONOTONIC, shared by every process of the machine and never
 * set back or forward like the wall clock), with sub-millisecond resolution. A client measures how late a token
 * arrives that a server process scheduled by comparing two readings of it taken in different processes.
 */
export function monotonicNow(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
