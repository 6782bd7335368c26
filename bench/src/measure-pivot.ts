import { setTimeout as sleep } from 'node:timers/promises';
import { CPP_SUBPROTOCOL, newMessageId, newThreadId } from '@promethea/cpp-protocol';
import type { BenchContext, RunningServer } from './bench-context.js';
import { BenchSocket } from './bench-socket.js';
import { clientFrame, startStreamingThread } from './cpp-frames.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { inTurn } from './in-turn.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import { describeStart, type StreamsStarted } from './load-results.js';
import type { ServerKind } from './load-target.js';
import type { SseChatRequest } from './peer-protocols.js';
import { dueTimesOf } from './paced-tokens.js';
import type { LoopDelayFigures } from './server-process.js';
import { SseLoadStream } from './sse-load-stream.js';

/** Time for the streams to settle into their pace before anything is timed. */
const SETTLE_MS = 1000;
/**
 * Tokens of the streaming answer the probe waits for before it pivots: a pivot interrupts a live stream. Tokens,
 * not chunks, so that the wait is the same whatever the chunk interval: with 20 ms tokens and 40 ms chunks, the
 * answer's first chunk (its first token, never held) and the next one.
 */
const TOKENS_BEFORE_PIVOT = 2;
/** The name of the pivot measure taken at 80 % of the capacity CPP showed in the same run. */
export const AT_CAPACITY_80 = 'capacity-80';
const FIRST_PROMPT = 'tell me a long story';

/**
 * Targets (CPP ÷ the same run's baseline) by the load's name: pivot → HALTED p50 and → the new branch's first
 * chunk p50 ÷ the ws echo p50, event-loop delay p99 ÷ the raw server's, and whether CPP's pivot must bring the new
 * answer's first token sooner than an SSE client's abort and new POST. None at 1,000 streams: past this machine's
 * capacity, what is measured there is a saturated event loop (the figures are still shown).
 */
const TARGETS: Record<string, { halted: number; firstChunk: number; loop?: number; aheadOfSse?: true }> = {
  '1': { halted: 1.5, firstChunk: 2.5, aheadOfSse: true },
  '100': { halted: 1.5, firstChunk: 2.5, loop: 1.3, aheadOfSse: true },
  [AT_CAPACITY_80]: { halted: 2, firstChunk: 3, loop: 1.3 },
};
/** How long the SSE probe waits for its answer's tokens before it gives the run up (as BenchSocket waits for a frame). */
const TOKENS_WAIT_LIMIT_MS = 20_000;
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

/** The SSE peer's pivot: the answer's request aborted, a new one posted → the new answer's first chunk. */
interface SseRun extends LoadedRun {
  firstChunk: LatencySummary;
}

export interface PivotDetails {
  /** How the figures' ids name this load: its number of streams, or AT_CAPACITY_80. */
  name: string;
  load: number;
  cpp: CppRun[];
  raw: RawRun[];
  sse: SseRun[];
  failures: string[];
}

export interface PivotLoad {
  streams: number;
  /** As the figures' ids name it (by default the number of streams). */
  name?: string;
  /** Time the SSE peer's pivot under the same load too. */
  withSse: boolean;
}

/**
 * Measure 1 (and 6): with `load` sessions streaming, a probe session pivots its own stream
 * again and again and times PIVOT_INIT → CPP_STREAM_HALTED and → the new branch's first chunk. The baseline is a
 * bare ws echo of a frame of the same size, under the same number of raw streams. The server's event-loop delay
 * is recorded meanwhile. With `withSse`, the SSE peer's pivot is timed under as many SSE streams: the answer's
 * request aborted and a new one posted, to the new answer's first chunk.
 */
export async function measurePivot(
  context: BenchContext,
  { streams: load, name = String(load), withSse }: PivotLoad,
): Promise<{ figures: Figure[]; details: PivotDetails }> {
  const details: PivotDetails = { name, load, cpp: [], raw: [], sse: [], failures: [] };
  const overloaded = new Set<ServerKind>();
  const kinds: ServerKind[] = withSse ? ['cpp', 'raw', 'sse'] : ['cpp', 'raw'];
  const { pivots } = context.options;
  for (let run = 0; run < context.options.runs; run += 1) {
    for (const kind of inTurn(kinds, run)) {
      // A load that one run could not carry is not tried again: it would only fail more slowly.
      if (overloaded.has(kind)) continue;
      context.log(`pivot: ${load} streams, ${kind}, run ${run + 1}/${context.options.runs}`);
      try {
        if (kind === 'cpp')
          details.cpp.push(await underLoad(context, 'cpp', load, (server) => timePivots(server, pivots)));
        else if (kind === 'sse')
          details.sse.push(await underLoad(context, 'sse', load, (server) => timeSsePivots(server, pivots)));
        else details.raw.push(await underLoad(context, 'raw', load, (server) => timeEchoes(server, pivots)));
      } catch (error) {
        // One run lost to an overloaded machine leaves the others' figures standing; the failure is on record.
        overloaded.add(kind);
        details.failures.push(
          `${kind} run ${run + 1}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
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
      if (backgroundStart.failed > 0)
        throw new Error(`the background load did not start: ${describeStart(backgroundStart)}`);
    }
    await sleep(SETTLE_MS);
    await server.process.request('loopDelayStart');
    const loadCpuBefore = await context.load.request<number>('cpuMs');
    const probeStart = performance.now();
    const result = await probe(server);
    const loadCpuPercent = Math.round(
      (((await context.load.request<number>('cpuMs')) - loadCpuBefore) / (performance.now() - probeStart)) * 100,
    );
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
      socket.send({
        type: 'echo',
        timestamp: Date.now(),
        payload: { seq: index, ...pivotFrame(threadId, newMessageId(), index).payload },
      });
      const { receivedAt } = await answer;
      if (index >= warmUp) echo.record(receivedAt - sentAt);
    }
    return { echo: echo.summary() };
  } finally {
    socket.close();
  }
}

/**
 * The pivot as an app on SSE makes it (the AI SDK's `useChat`, LibreChat): once its answer has streamed as many
 * tokens as CPP's probe waits for, the client aborts the request (its connection closes, which stops the answer on
 * the server) and posts the conversation again with the interrupted answer's text and a new prompt; timed from the
 * abort to the new answer's first chunk. Like CPP's pivots, each one branches from the answer the previous started,
 * so the conversation posted grows as CPP's context does.
 */
async function timeSsePivots(server: RunningServer, count: number): Promise<Omit<SseRun, keyof LoadedRun>> {
  const id = newThreadId();
  const messages: SseChatRequest['messages'] = [{ role: 'user', content: FIRST_PROMPT }];
  let answer = new SseProbeAnswer(server.url);
  await answer.start({ id, messages });
  try {
    const firstChunk = new LatencyRecorder();
    const warmUp = Math.ceil(count / 10);
    const deadline = performance.now() + PROBE_TIME_LIMIT_MS;
    for (let index = 0; index < warmUp + count && performance.now() < deadline; index += 1) {
      await answer.tokens(TOKENS_BEFORE_PIVOT);
      const sentAt = performance.now();
      answer.close();
      messages.push({ role: 'assistant', content: answer.text }, { role: 'user', content: pivotPrompt(index) });
      answer = new SseProbeAnswer(server.url);
      const firstChunkAt = await answer.start({ id, messages });
      if (index >= warmUp) firstChunk.record(firstChunkAt - sentAt);
    }
    return { firstChunk: firstChunk.summary() };
  } finally {
    answer.close();
  }
}

/** The probe's SSE answer: keeps its text, and tells when it has streamed a number of tokens. */
class SseProbeAnswer {
  text = '';
  private tokensSeen = 0;
  private awaited: { tokens: number; resolve(): void } | undefined;
  private readonly stream: SseLoadStream;

  constructor(url: string) {
    this.stream = new SseLoadStream(url, (frame, deltaFrom) => this.receive(frame.toString(), deltaFrom));
  }

  /** Posts the conversation; settles with the time its first chunk was read. */
  async start(chat: SseChatRequest): Promise<number> {
    await this.stream.start(performance.now(), chat);
    return this.stream.firstChunkAt!;
  }

  /** Settles once the answer has streamed `count` tokens; fails when they do not come (a stream cut short). */
  tokens(count: number): Promise<void> {
    if (this.tokensSeen >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`the SSE answer did not stream ${count} tokens within ${TOKENS_WAIT_LIMIT_MS / 1000} s`)),
        TOKENS_WAIT_LIMIT_MS,
      );
      this.awaited = {
        tokens: count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    });
  }

  close(): void {
    this.stream.close();
  }

  // The frames are ASCII (ids, times), so the delta's byte offset is its offset in the text too.
  private receive(frame: string, deltaFrom: number): void {
    const delta = frame.slice(deltaFrom, frame.indexOf('"', deltaFrom));
    this.text += delta;
    this.tokensSeen += dueTimesOf(delta).length;
    if (this.awaited && this.tokensSeen >= this.awaited.tokens) {
      this.awaited.resolve();
      this.awaited = undefined;
    }
  }
}

/** Waits until the answer (`nodeId`, or the raw server's one stream) has sent TOKENS_BEFORE_PIVOT tokens, `seen` already. */
async function awaitTokens(socket: BenchSocket, nodeId: string | undefined, seen: number): Promise<void> {
  for (let tokens = seen; tokens < TOKENS_BEFORE_PIVOT; ) {
    const { frame } = await socket.next(
      'CPP_STREAM_CHUNK',
      (chunk) => nodeId === undefined || chunk.payload.nodeId === nodeId,
    );
    tokens += dueTimesOf(frame.payload.delta).length;
  }
}

function pivotFrame(threadId: string, interruptedNodeId: string, index: number) {
  return clientFrame('CPP_PIVOT_INIT', {
    activeThreadId: threadId,
    interruptedNodeId,
    userPrompt: pivotPrompt(index),
    newBranchNodeId: newMessageId(),
  });
}

function pivotPrompt(index: number): string {
  return `actually, take a different direction (${index})`;
}

/** `store` names the store under which the event-loop delay was taken. */
function pivotFigures(details: PivotDetails, store: string): Figure[] {
  const { name, load, cpp, raw, sse } = details;
  const targets = TARGETS[name];
  const of = (values: (run: CppRun) => number) => median(cpp.map(values));
  const echo = (values: (run: RawRun) => number) => median(raw.map(values));
  const streams = `${load.toLocaleString('en-US')} stream${load === 1 ? '' : 's'}`;
  const at = name === AT_CAPACITY_80 ? `80 % of capacity (${streams})` : streams;
  const echoP50 = { label: 'ws echo p50', value: echo((run) => run.echo.p50) };
  const echoP99 = { label: 'ws echo p99', value: echo((run) => run.echo.p99) };
  const atMost = (bound: number | undefined) => (bound === undefined ? {} : { target: ratioTarget('≤', bound) });
  const figures = [
    figure({
      id: `pivot.halted.p50.${name}`,
      label: `Pivot → HALTED p50, ${at}`,
      unit: 'ms',
      value: of((run) => run.halted.p50),
      baseline: echoP50,
      ...atMost(targets?.halted),
    }),
    figure({
      id: `pivot.halted.p99.${name}`,
      label: `Pivot → HALTED p99, ${at}`,
      unit: 'ms',
      value: of((run) => run.halted.p99),
      baseline: echoP99,
    }),
    figure({
      id: `pivot.first-chunk.p50.${name}`,
      label: `Pivot → new branch's 1st chunk p50, ${at}`,
      unit: 'ms',
      value: of((run) => run.firstChunk.p50),
      baseline: echoP50,
      ...atMost(targets?.firstChunk),
    }),
    figure({
      id: `pivot.first-chunk.p99.${name}`,
      label: `Pivot → new branch's 1st chunk p99, ${at}`,
      unit: 'ms',
      value: of((run) => run.firstChunk.p99),
      baseline: echoP99,
    }),
    figure({
      id: `event-loop.p99.${name}`,
      label: `Event-loop delay p99, ${at}, ${store}`,
      unit: 'ms',
      value: of((run) => run.loop.p99),
      baseline: { label: 'raw ws server', value: echo((run) => run.loop.p99) },
      ...atMost(targets?.loop),
    }),
  ];
  if (sse.length > 0 || details.failures.some((failure) => failure.startsWith('sse'))) {
    const peer = (values: (run: SseRun) => number) => median(sse.map(values));
    figures.push(
      figure({
        id: `pivot.first-chunk.p50.${name}.vs-sse`,
        label: `Pivot → new answer's 1st chunk p50, ${at}, CPP ÷ SSE`,
        unit: 'ms',
        value: of((run) => run.firstChunk.p50),
        baseline: { label: 'SSE abort + POST p50', value: peer((run) => run.firstChunk.p50) },
        ...(targets?.aheadOfSse ? { target: ratioTarget('<', 1) } : {}),
      }),
      figure({
        id: `pivot.first-chunk.p99.${name}.vs-sse`,
        label: `Pivot → new answer's 1st chunk p99, ${at}, CPP ÷ SSE`,
        unit: 'ms',
        value: of((run) => run.firstChunk.p99),
        baseline: { label: 'SSE abort + POST p99', value: peer((run) => run.firstChunk.p99) },
      }),
    );
  }
  return figures;
}
