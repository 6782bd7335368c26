import { CPP_SUBPROTOCOL, newMessageId, newThreadId } from '@promethea/cpp-protocol';
import { serveRequests } from './bench-process.js';
import { BenchSocket, type Received } from './bench-socket.js';
import { clientFrame, startStreamingThread } from './cpp-frames.js';
import { inBatches } from './in-batches.js';
import { LatencyRecorder, type LatencySummary } from './latency-recorder.js';
import { monotonicNow } from './clock.js';
import { dueTimeOf } from './paced-tokens.js';

export type ServerKind = 'cpp' | 'raw';

export interface LoadTarget {
  url: string;
  kind: ServerKind;
  count: number;
}

export interface ChunkDelays extends LatencySummary {
  /** Chunks that arrived in the window, against what the streams' pace promises. */
  received: number;
  expected: number;
}

export interface StreamsStarted {
  started: number;
  failed: number;
}

const CONNECT_CONCURRENCY = 64;
/** A server that cannot start the streams within this time is overloaded; the rest are not tried. */
const START_DEADLINE_MS = 60_000;

/**
 * The load generator, in its own process: it holds the many client connections (streaming or idle) so that their
 * traffic does not share an event loop with the server or with the probe that measures latency.
 */
const sockets: BenchSocket[] = [];
let window: LatencyRecorder | undefined;
let streaming = 0;

serveRequests(null, {
  /** Streams that could not start (refused, dropped, timed out) are counted, not thrown: an overloaded server shows as such. */
  streams: async (target: LoadTarget): Promise<StreamsStarted> => {
    const deadline = performance.now() + START_DEADLINE_MS;
    const outcomes = await inBatches(target.count, CONNECT_CONCURRENCY, async () => {
      if (performance.now() > deadline) return false;
      return openStream(target).then(() => true, () => false);
    });
    const started = outcomes.filter(Boolean).length;
    streaming += started;
    return { started, failed: target.count - started };
  },
  idle: async (target: LoadTarget) => {
    const opened = await inBatches(target.count, CONNECT_CONCURRENCY, () => connect(target));
    sockets.push(...opened);
    return { connections: sockets.length };
  },
  /** Each idle CPP connection opens a new, empty thread: an idle session as a web client leaves it. */
  openThreads: async () => {
    await inBatches(sockets.length, CONNECT_CONCURRENCY, async (index) => {
      const socket = sockets[index]!;
      const synced = socket.next('CPP_SYNC_GRAPH');
      socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
      await synced;
    });
  },
  measure: async ({ durationMs, intervalMs }: { durationMs: number; intervalMs: number }): Promise<ChunkDelays> => {
    const recorder = new LatencyRecorder();
    window = recorder;
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    window = undefined;
    return { ...recorder.summary(), received: recorder.count, expected: Math.round((streaming * durationMs) / intervalMs) };
  },
  closeAll: () => {
    for (const socket of sockets.splice(0)) socket.close();
    streaming = 0;
  },
  stop: () => {
    for (const socket of sockets.splice(0)) socket.close();
  },
});

function connect(target: LoadTarget): Promise<BenchSocket> {
  return target.kind === 'cpp' ? BenchSocket.connect(target.url, CPP_SUBPROTOCOL) : BenchSocket.connect(target.url);
}

async function openStream(target: LoadTarget): Promise<void> {
  const socket = await connect(target);
  sockets.push(socket);
  socket.onFrame = recordDelay;
  if (target.kind === 'cpp') {
    await startStreamingThread(socket);
    return;
  }
  const firstChunk = socket.next('CPP_STREAM_CHUNK');
  socket.send({ type: 'stream', payload: { threadId: newThreadId(), nodeId: newMessageId() } });
  await firstChunk;
}

/** How late a chunk arrived against the time its token was due at the model. */
function recordDelay({ frame }: Received): void {
  if (window && frame.type === 'CPP_STREAM_CHUNK') window.record(monotonicNow() - dueTimeOf(frame.payload.delta));
}
