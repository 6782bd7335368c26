import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext } from './bench-context.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { inTurn } from './in-turn.js';
import { describeStart, type StreamsStarted, type TokenDelays } from './load-results.js';
import { PEER_LABELS, type ServerKind } from './load-target.js';

const DELAY_LIMIT_MS = 50;
/** A server that sends fewer tokens than the pace promises is falling behind, whatever the delays of those it sent. */
const MIN_DELIVERED = 0.95;
/** CPP ÷ the raw ws server pushing the same chunks. */
const RAW_RATIO_TARGET = 0.85;
const SETTLE_MS = 1500;
/** Steps of the search are rounded to this many streams. */
const GRAIN = 50;

interface Step extends TokenDelays {
  streams: number;
  held: boolean;
  /** The server process's CPU use during the window, in percent of one core. */
  serverCpuPercent: number;
  start: StreamsStarted;
}

interface Capacity {
  streams: number;
  /** The search reached its maximum without a failure. */
  atLeast: boolean;
  steps: Step[];
}

export interface CapacityResult {
  figures: Figure[];
  details: Partial<Record<ServerKind, Capacity[]>>;
  /** CPP's capacity (the median search's), on which the pivot at 80 % of capacity is taken. */
  cppStreams: number;
}

/**
 * Measure 3: the most concurrent paced streams (50 tokens/s by default) one server process holds with p99 token
 * delay ≤ 50 ms. Doubles the load from the start until a step fails (or halves it until one holds), then bisects.
 * The baseline is the raw ws server pushing the same frames on the same schedule; the peers (`--peers`: a
 * Socket.IO server, an SSE endpoint) push them too and are searched the same way. Each server is searched `runs`
 * times, taking turns to go first, and the median search is reported: near its capacity a server holds a load
 * in one window and not in the next, so a single search can land a step lower or higher.
 */
export async function measureCapacity(context: BenchContext): Promise<CapacityResult> {
  const kinds: ServerKind[] = ['cpp', 'raw', ...context.options.peers];
  const searches: Partial<Record<ServerKind, Capacity[]>> = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let run = 0; run < context.options.runs; run += 1) {
    for (const kind of inTurn(kinds, run)) searches[kind]!.push(await searchCapacity(context, kind));
  }
  const cpp = medianSearch(searches.cpp!);
  const raw = medianSearch(searches.raw!);
  const tokensPerSecond = Math.round(1000 / context.options.intervalMs);
  const label = `Concurrent ${tokensPerSecond} tok/s streams at p99 token delay ≤ ${DELAY_LIMIT_MS} ms`;
  const cppFields = { unit: 'streams' as const, value: cpp.streams, atLeast: cpp.atLeast };
  const figures = [
    figure({
      id: 'capacity.streams',
      label,
      ...cppFields,
      baseline: { label: 'raw ws', value: raw.streams },
      baselineAtLeast: raw.atLeast,
      target: ratioTarget('≥', RAW_RATIO_TARGET),
    }),
  ];
  // CPP ÷ each peer: CPP is to hold more streams than either.
  for (const peer of context.options.peers) {
    const search = medianSearch(searches[peer]!);
    figures.push(
      figure({
        id: `capacity.streams.vs-${peer}`,
        label: `${label}, CPP ÷ ${PEER_LABELS[peer]}`,
        ...cppFields,
        baseline: { label: PEER_LABELS[peer], value: search.streams },
        baselineAtLeast: search.atLeast,
        target: ratioTarget('>', 1),
      }),
    );
  }
  return { figures, details: searches, cppStreams: cpp.streams };
}

/** The search whose capacity is the median of the runs' (the lower middle one of an even number). */
function medianSearch(searches: readonly Capacity[]): Capacity {
  const sorted = [...searches].sort((a, b) => a.streams - b.streams);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

async function searchCapacity(context: BenchContext, kind: ServerKind): Promise<Capacity> {
  const { capacityStart, capacityMax, capacityRefine } = context.options;
  const steps: Step[] = [];
  const tryLoad = async (streams: number) => {
    const step = await holdStreams(context, kind, streams);
    steps.push(step);
    return step.held;
  };
  let held = 0;
  let failed: number | undefined;
  let streams = Math.min(capacityStart, capacityMax);
  // Up from the start while it holds; down from it, to the grain, while it does not.
  while (failed === undefined) {
    if (await tryLoad(streams)) held = streams;
    else failed = streams;
    if (streams >= capacityMax) break;
    streams = Math.min(streams * 2, capacityMax);
  }
  while (held === 0 && failed !== undefined && failed > GRAIN) {
    const lower = Math.max(GRAIN, Math.round(failed / 2 / GRAIN) * GRAIN);
    if (await tryLoad(lower)) held = lower;
    else failed = lower;
  }
  for (let refine = 0; failed !== undefined && refine < capacityRefine; refine += 1) {
    const middle = Math.round((held + failed) / 2 / GRAIN) * GRAIN;
    if (middle <= held || middle >= failed) break;
    if (await tryLoad(middle)) held = middle;
    else failed = middle;
  }
  return { streams: held, atLeast: failed === undefined, steps };
}

async function holdStreams(context: BenchContext, kind: ServerKind, streams: number): Promise<Step> {
  context.log(`capacity: ${kind}, ${streams} streams`);
  const server = await context.startServer(kind);
  try {
    const start = await context.startStreams(server, streams);
    context.log(`capacity: ${kind}, ${describeStart(start)}`);
    await sleep(SETTLE_MS);
    const cpuBefore = await server.process.request<number>('cpuMs');
    const delays = await context.load.request<TokenDelays>('measure', {
      durationMs: context.options.capacityWindowMs,
      intervalMs: context.options.intervalMs,
    });
    const serverCpuPercent = Math.round(
      (((await server.process.request<number>('cpuMs')) - cpuBefore) / context.options.capacityWindowMs) * 100,
    );
    const held =
      start.failed === 0 && delays.p99 <= DELAY_LIMIT_MS && delays.received >= MIN_DELIVERED * delays.expected;
    context.log(
      `capacity: ${kind}, ${streams} streams: token delay p50 ${delays.p50.toFixed(1)} ms, p99 ${delays.p99.toFixed(1)} ms, ` +
        `${delays.received}/${delays.expected} tokens in ${delays.frames} frames (${delays.framesPerStreamPerSecond.toFixed(1)}/s a stream), ` +
        `CPU: server ${serverCpuPercent}%, load generator ${delays.loadCpuPercent}% → ${held ? 'held' : 'not held'}`,
    );
    return { streams, held, serverCpuPercent, start, ...delays };
  } finally {
    await context.finish(server);
  }
}
