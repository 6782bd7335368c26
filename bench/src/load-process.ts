import { setTimeout as sleep } from 'node:timers/promises';
import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { serveRequests } from './bench-process.js';
import { BenchSocket } from './bench-socket.js';
import { monotonicNow } from './clock.js';
import { cpuMs } from './cpu-time.js';
import { clientFrame } from './cpp-frames.js';
import { inBatches } from './in-batches.js';
import { LatencyRecorder } from './latency-recorder.js';
import type { StreamsRequest, StreamsStarted, TokenDelays } from './load-results.js';
import { connectLoadStream } from './load-stream.js';
import type { LoadStream, LoadTarget } from './load-target.js';
import { readDueTimes } from './paced-tokens.js';
import { SocketIoLoadStream } from './socketio-load-stream.js';

const CONNECT_CONCURRENCY = 64;
/** A server that cannot start the streams within this time is overloaded; the rest are not tried. */
const START_DEADLINE_MS = 60_000;
/** The fastest pace at which streams start, so that the server is not handed all prompts in one read. */
const MIN_START_SPACING_MS = 0.5;

/** The tokens of a measure's window: each token's delay, and how many tokens and frames came. */
class TokenWindow {
  readonly delays = new LatencyRecorder();
  tokens = 0;
  frames = 0;
  private arrivedAt = 0;
  private readonly recordDelay = (due: number) => this.delays.record(this.arrivedAt - due);

  /** How late each token of a chunk arrived against the time it was due at the model. */
  chunk(frame: Buffer | string, deltaFrom: number): void {
    this.arrivedAt = monotonicNow();
    this.frames += 1;
    this.tokens += readDueTimes(frame, deltaFrom, this.recordDelay);
  }
}

/**
 * The load generator, in its own process: it holds the many client connections (streaming or idle) so that their
 * traffic does not share an event loop with the server or with the probe that measures latency.
 */
const streams: LoadStream[] = [];
/** Connections open and silent: the memory measure's. */
const idle: Array<BenchSocket | SocketIoLoadStream> = [];
/** Streams whose answer started: the load the measures count on. */
let streaming = 0;
let window: TokenWindow | undefined;
const receiveChunk = (frame: Buffer | string, deltaFrom: number) => window?.chunk(frame, deltaFrom);

serveRequests(null, {
  streams: startStreams,
  idle: async (target: LoadTarget & { count: number }) => {
    const opened = await inBatches(target.count, CONNECT_CONCURRENCY, () => connectIdle(target));
    idle.push(...opened);
    return { connections: idle.length };
  },
  /** Each idle CPP connection opens a new, empty thread: an idle session as a web client leaves it. */
  openThreads: async () => {
    const sockets = idle.filter((connection) => connection instanceof BenchSocket);
    await inBatches(sockets.length, CONNECT_CONCURRENCY, async (index) => {
      const socket = sockets[index]!;
      const synced = socket.next('CPP_SYNC_GRAPH');
      socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
      await synced;
    });
  },
  measure: async ({ durationMs, intervalMs }: { durationMs: number; intervalMs: number }): Promise<TokenDelays> => {
    const measured = new TokenWindow();
    const cpuBefore = cpuMs();
    window = measured;
    await sleep(durationMs);
    window = undefined;
    const loadCpuPercent = Math.round(((cpuMs() - cpuBefore) / durationMs) * 100);
    const seconds = durationMs / 1000;
    return {
      ...measured.delays.summary(),
      received: measured.tokens,
      expected: Math.round((streaming * durationMs) / intervalMs),
      frames: measured.frames,
      framesPerStreamPerSecond: streaming > 0 ? round(measured.frames / streaming / seconds) : 0,
      loadCpuPercent,
    };
  },
  cpuMs,
  closeAll,
  stop: closeAll,
});

/**
 * Opens `count` streams: connections at most CONNECT_CONCURRENCY at a time (the listen backlog), each starting its
 * answer as soon as it is connected, without holding a connection slot while it waits for it. Streams that could
 * not start (refused, dropped, not started by the deadline) are counted with their reasons, not thrown: an
 * overloaded server shows as such.
 */
async function startStreams({ count, spreadMs, ...target }: StreamsRequest): Promise<StreamsStarted> {
  const begun = performance.now();
  const deadline = begun + START_DEADLINE_MS;
  const spacing = Math.max(MIN_START_SPACING_MS, spreadMs / count);
  const failures = new Map<string, number>();
  const fail = (reason: unknown) => {
    const text = reason instanceof Error ? reason.message.split('\n')[0]! : String(reason);
    failures.set(text, (failures.get(text) ?? 0) + 1);
  };
  const firstDueTimes: number[] = [];
  const starting = new Set<LoadStream>();
  /** Off at the deadline: the streams then closed fail as late, not as closed. */
  let counting = true;
  const starts: Promise<void>[] = [];
  await inBatches(count, CONNECT_CONCURRENCY, async (index) => {
    if (performance.now() > deadline) return fail(`not connected within ${START_DEADLINE_MS / 1000} s`);
    try {
      const stream = await connectLoadStream(target, receiveChunk);
      streams.push(stream);
      starting.add(stream);
      const started = stream.start(begun + index * spacing).then(
        (due) => void firstDueTimes.push(due),
        (error: unknown) => {
          if (counting) fail(error);
        },
      );
      starts.push(started.finally(() => starting.delete(stream)));
    } catch (error) {
      fail(error);
    }
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(starts),
    new Promise((resolve) => (timer = setTimeout(resolve, deadline - performance.now()))),
  ]);
  clearTimeout(timer);
  counting = false;
  // A stream that starts late would add load the figures do not count: it is closed.
  for (const stream of starting) {
    stream.close();
    streams.splice(streams.indexOf(stream), 1);
    fail(`connected, no first chunk within ${START_DEADLINE_MS / 1000} s`);
  }
  const started = firstDueTimes.length;
  streaming += started;
  return {
    started,
    failed: count - started,
    failures: Object.fromEntries(failures),
    startMs: Math.round(performance.now() - begun),
    samePhaseShare: samePhaseShare(firstDueTimes, spreadMs),
  };
}

/** The largest share of due times that fall in one same millisecond modulo `periodMs`. */
function samePhaseShare(dueTimes: readonly number[], periodMs: number): number {
  if (dueTimes.length === 0 || periodMs < 1) return 0;
  const perMillisecond = new Array<number>(Math.ceil(periodMs)).fill(0);
  for (const due of dueTimes) perMillisecond[Math.floor(due % periodMs)]! += 1;
  return round(Math.max(...perMillisecond) / dueTimes.length);
}

/** An SSE answer is a request: it has no idle connection to measure. */
function connectIdle(target: LoadTarget): Promise<BenchSocket | SocketIoLoadStream> {
  switch (target.kind) {
    case 'cpp':
      return BenchSocket.connect(target.url, CPP_SUBPROTOCOL);
    case 'raw':
      return BenchSocket.connect(target.url);
    case 'socketio':
      return SocketIoLoadStream.connect(target.url, () => undefined);
    case 'sse':
      throw new Error('an SSE server has no idle connections');
  }
}

function closeAll(): void {
  streaming = 0;
  for (const stream of streams.splice(0)) stream.close();
  for (const socket of idle.splice(0)) socket.close();
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
