import { setTimeout as sleep } from 'node:timers/promises';
import { CPP_SUBPROTOCOL, newMessageId, newThreadId } from '@promethea/cpp-protocol';
import type { BenchContext, RunningServer } from './bench-context.js';
import { BenchSocket } from './bench-socket.js';
import { clientFrame, startStreamingThread } from './cpp-frames.js';
import { figure, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import { describeStart, type StreamsStarted } from './load-results.js';
import type { ServerKind } from './load-stream.js';
import { dueTimesOf } from './paced-tokens.js';
import type { LoopDelayFigures } from './server-process.js';

/** Time for the streams to settle into their pace before anything is timed. */
const SETTLE_MS = 1000;
/**
 * Tokens of the streaming answer the probe waits for before it pivots: a pivot interrupts a live stream. Tokens,
 * not chunks, so that the wait is the same whatever the chunk interval: with 20 ms tokens and 40 ms chunks, the
 * answer's first chunk (its first token, never held) and the next one.
 */
const TOKENS_BEFORE_PIVOT = 2;
const HALT_P99_TARGET_MS = 10;
const HALT_RATIO_TARGET = 2;
const LOOP_DELAY_TARGET_MS = 20;
/** An overloaded server could make a run last for ever: a probe stops after this long with the samples it has. */
const PROBE_TIME_LIMIT_MS = 60_000;

/** What every run under load records beside its latencies. */
interface LoadedRun {
  loop: LoopDelayFigures;
  /** How the background streams started (none at a load of 1); a run whose streams did not all start fails. */
  backgroundStart?: StreamsStarted;
  /** The load generator's CPU use while the probe ran, in percent of one core. */
  loadCpuPercent: number;
}

interface CppRun extends LoadedRun {
  halted: LatencySummary;
  firstChunk: LatencySummary;
}

interface RawRun extends LoadedRun {
  echo: LatencySummary;
}

export interface PivotDetails {
  load: number;
  cpp: CppRun[];
  raw: RawRun[];
  failures: string[];
}

/**
 * Measure 1 (and 6): with `load` sessions streaming, a probe session pivots its own stream
 * again and again and times PIVOT_INIT → CPP_STREAM_HALTED and → the new branch's first chunk. The baseline is a
 * bare ws echo of a frame of the same size, under the same number of raw streams. The server's event-loop delay
 * is recorded meanwhile.
 */
export async function measurePivot(context: BenchContext, load: number): Promise<{ figures: Figure[]; details: PivotDetails }> {
  const details: PivotDetails = { load, cpp: [], raw: [], failures: [] };
  const overloaded = new Set<ServerKind>();
  for (let run = 0; run < context.options.runs; run += 1) {
    // Alternate which server goes first, so that neither always meets a warmer or cooler machine.
    for (const kind of (run % 2 === 0 ? ['cpp', 'raw'] : ['raw', 'cpp']) as ServerKind[]) {
      // A load that one run could not carry is not tried again: it would only fail more slowly.
      if (overloaded.has(kind)) continue;
      context.log(`pivot: ${load} streams, ${kind}, run ${run + 1}/${context.options.runs}`);
      try {
        if (kind === 'cpp') details.cpp.push(await underLoad(context, 'cpp', load, (server) => timePivots(server, context.options.pivots)));
        else details.raw.push(await underLoad(context, 'raw', load, (server) => timeEchoes(server, context.options.pivots)));
      } catch (error) {
        // One run lost to an overloaded machine leaves the others' figures standing; the failure is on record.
        overloaded.add(kind);
        details.failures.push(`${kind} run ${run + 1}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
        context.log(`pivot: ${load} streams, ${kind}, run ${run + 1} failed: ${details.failures.at(-1)}`);
      }
    }
  }
  return { figures: pivotFigures(details, `${context.options.store} store`), details };
}

async function underLoad<Result>(
  context: BenchContext,
  kind: ServerKind,
  load: number,
  probe: (server: RunningServer) => Promise<Result>,
): Promise<Result & LoadedRun> {
  const server = await context.startServer(kind);
  try {
    // The probe's own stream is one of the `load` sessions.
    const backgroundStart = load > 1 ? await context.startStreams(server, load - 1) : undefined;
    if (backgroundStart) {
      context.log(`pivot: ${kind}, background: ${describeStart(backgroundStart)}`);
      // Figures taken under less load than asked would be reported as the load's: the run fails instead.
      if (backgroundStart.failed > 0) throw new Error(`the background load did not start: ${describeStart(backgroundStart)}`);
    }
    await sleep(SETTLE_MS);
    await server.process.request('loopDelayStart');
    const loadCpuBefore = await context.load.request<number>('cpuMs');
    const probeStart = performance.now();
    const result = await probe(server);
    const loadCpuPercent = Math.round((((await context.load.request<number>('cpuMs')) - loadCpuBefore) / (performance.now() - probeStart)) * 100);
    const loop = await server.process.request<LoopDelayFigures>('loopDelayStop');
    return { ...result, loop, loadCpuPercent, ...(backgroundStart ? { backgroundStart } : {}) };
  } finally {
    await context.finish(server);
  }
}

async function timePivots(server: RunningServer, count: number): Promise<Omit<CppRun, keyof LoadedRun>> {
  const socket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL);
  try {
    const thread = await startStreamingThread(socket);
    const halted = new LatencyRecorder();
    const firstChunk = new LatencyRecorder();
    let nodeId = thread.nodeId;
    let tokensSeen = dueTimesOf(thread.firstDelta).length;
    const warmUp = Math.ceil(count / 10);
    const deadline = performance.now() + PROBE_TIME_LIMIT_MS;
    for (let index = 0; index < warmUp + count && performance.now() < deadline; index += 1) {
      await awaitTokens(socket, nodeId, tokensSeen);
      const interruptedNodeId = nodeId;
      const haltedFrame = socket.next('CPP_STREAM_HALTED');
      const newChunk = socket.next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId !== interruptedNodeId);
      const sentAt = performance.now();
      socket.send(pivotFrame(thread.threadId, interruptedNodeId, index));
      const haltedAt = (await haltedFrame).receivedAt;
      const chunk = await newChunk;
      nodeId = chunk.frame.payload.nodeId;
      tokensSeen = dueTimesOf(chunk.frame.payload.delta).length;
      if (index < warmUp) continue;
      halted.record(haltedAt - sentAt);
      firstChunk.record(chunk.receivedAt - sentAt);
    }
    return { halted: halted.summary(), firstChunk: firstChunk.summary() };
  } finally {
    socket.close();
  }
}

/** The same probe against the raw server: it streams too, and sends an echo of a pivot's size where CPP pivots. */
async function timeEchoes(server: RunningServer, count: number): Promise<Omit<RawRun, keyof LoadedRun>> {
  const socket = await BenchSocket.connect(server.url);
  try {
    const threadId = newThreadId();
    const firstChunk = socket.next('CPP_STREAM_CHUNK');
    socket.send({ type: 'stream', payload: { threadId, nodeId: newMessageId() } });
    await firstChunk;
    const echo = new LatencyRecorder();
    const warmUp = Math.ceil(count / 10);
    const deadline = performance.now() + PROBE_TIME_LIMIT_MS;
    for (let index = 0; index < warmUp + count && performance.now() < deadline; index += 1) {
      await awaitTokens(socket, undefined, 0);
      const answer = socket.next('echo', (frame) => frame.payload.seq === index);
      const sentAt = performance.now();
      socket.send({ type: 'echo', timestamp: Date.now(), payload: { seq: index, ...pivotFrame(threadId, newMessageId(), index).payload } });
      const { receivedAt } = await answer;
      if (index >= warmUp) echo.record(receivedAt - sentAt);
    }
    return { echo: echo.summary() };
  } finally {
    socket.close();
  }
}

/** Waits until the answer (`nodeId`, or the raw server's one stream) has sent TOKENS_BEFORE_PIVOT tokens, `seen` already. */
async function awaitTokens(socket: BenchSocket, nodeId: string | undefined, seen: number): Promise<void> {
  for (let tokens = seen; tokens < TOKENS_BEFORE_PIVOT; ) {
    const { frame } = await socket.next('CPP_STREAM_CHUNK', (chunk) => nodeId === undefined || chunk.payload.nodeId === nodeId);
    tokens += dueTimesOf(frame.payload.delta).length;
  }
}

function pivotFrame(threadId: string, interruptedNodeId: string, index: number) {
  return clientFrame('CPP_PIVOT_INIT', {
    activeThreadId: threadId,
    interruptedNodeId,
    userPrompt: `actually, take a different direction (${index})`,
    newBranchNodeId: newMessageId(),
  });
}

/** `store` names the store under which the event-loop delay was taken. */
function pivotFigures(details: PivotDetails, store: string): Figure[] {
  const { load, cpp, raw } = details;
  const of = (values: (run: CppRun) => number) => median(cpp.map(values));
  const echo = (values: (run: RawRun) => number) => median(raw.map(values));
  const streams = `${load.toLocaleString('en-US')} stream${load === 1 ? '' : 's'}`;
  const echoP50 = { label: 'ws echo p50', value: echo((run) => run.echo.p50) };
  const echoP99 = { label: 'ws echo p99', value: echo((run) => run.echo.p99) };
  const atTargetLoad = load >= 1000;
  const haltedP50 = of((run) => run.halted.p50);
  const haltedP99 = of((run) => run.halted.p99);
  const figures = [
    figure({
      id: `pivot.halted.p50.${load}`,
      label: `Pivot → HALTED p50, ${streams}`,
      unit: 'ms',
      value: haltedP50,
      baseline: echoP50,
      ...(atTargetLoad ? { target: { text: `≤ ${HALT_RATIO_TARGET}× ws echo`, met: haltedP50 <= HALT_RATIO_TARGET * echoP50.value } } : {}),
    }),
    figure({
      id: `pivot.halted.p99.${load}`,
      label: `Pivot → HALTED p99, ${streams}`,
      unit: 'ms',
      value: haltedP99,
      baseline: echoP99,
      ...(atTargetLoad ? { target: { text: `≤ ${HALT_P99_TARGET_MS} ms`, met: haltedP99 <= HALT_P99_TARGET_MS } } : {}),
    }),
    figure({ id: `pivot.first-chunk.p50.${load}`, label: `Pivot → new branch's 1st chunk p50, ${streams}`, unit: 'ms', value: of((run) => run.firstChunk.p50), baseline: echoP50 }),
    figure({ id: `pivot.first-chunk.p99.${load}`, label: `Pivot → new branch's 1st chunk p99, ${streams}`, unit: 'ms', value: of((run) => run.firstChunk.p99), baseline: echoP99 }),
  ];
  const loopP99 = of((run) => run.loop.p99);
  figures.push(figure({
    id: `event-loop.p99.${load}`,
    label: `Event-loop delay p99, ${streams}, ${store}`,
    unit: 'ms',
    value: loopP99,
    baseline: { label: 'raw ws server', value: echo((run) => run.loop.p99) },
    ...(atTargetLoad ? { target: { text: `≤ ${LOOP_DELAY_TARGET_MS} ms`, met: loopP99 <= LOOP_DELAY_TARGET_MS } } : {}),
  }));
  return figures;
}
