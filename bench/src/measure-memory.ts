import { setTimeout as sleep } from 'node:timers/promises';
import { PROFILE_DIRECTORY, type BenchContext, type RunningServer } from './bench-context.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { inTurn } from './in-turn.js';
import { median } from './latency-recorder.js';
import type { MemoryFigures } from './server-process.js';

const KB = 1024;
/** CPP ÷ the bare ws server: per idle connection, and per idle connection with an open empty thread. */
const IDLE_RATIO_TARGET = 1.3;
const OPEN_THREAD_RATIO_TARGET = 1.6;
const SETTLE_MS = 500;

interface MemoryRun {
  connections: number;
  /** Bytes per connection: RSS and V8 heap, after collecting garbage. */
  rss: number;
  heap: number;
  /** CPP only: once each connection has opened an empty thread. */
  withThread?: { rss: number; heap: number };
}

type MeasuredKind = 'cpp' | 'raw' | 'socketio';

/**
 * Measure 4: server memory per idle connection (upgraded, nothing sent) at N connections, as RSS delta / N after a
 * full garbage collection, after one connection came and went (`warmUp`); against the same number of connections
 * to a bare ws server, and to the Socket.IO peer (connected with `socket.io-client`, its handshake done). CPP's
 * figure with one empty open thread per connection is reported too, since that is what an idle web client holds.
 * (An SSE client holds no connection between answers.)
 */
export async function measureMemory(
  context: BenchContext,
): Promise<{ figures: Figure[]; details: Partial<Record<MeasuredKind, MemoryRun[]>> }> {
  const kinds: MeasuredKind[] = context.options.peers.includes('socketio')
    ? ['cpp', 'raw', 'socketio']
    : ['cpp', 'raw'];
  const details: Partial<Record<MeasuredKind, MemoryRun[]>> = Object.fromEntries(kinds.map((kind) => [kind, []]));
  for (let run = 0; run < context.options.runs; run += 1) {
    for (const kind of inTurn(kinds, run)) {
      context.log(
        `memory: ${context.options.idleConnections} idle connections, ${kind}, run ${run + 1}/${context.options.runs}`,
      );
      const server = await context.startServer(kind);
      try {
        details[kind]!.push(await idleMemory(context, server));
      } finally {
        await context.finish(server);
      }
    }
  }
  const of = (kind: MeasuredKind, value: (run: MemoryRun) => number) => median(details[kind]!.map(value)) / KB;
  const rawRss = { label: 'raw ws', value: of('raw', (run) => run.rss) };
  const cppRss = of('cpp', (run) => run.rss);
  const connections = context.options.idleConnections.toLocaleString('en-US');
  return {
    figures: [
      figure({
        id: 'memory.idle-connection.rss',
        label: `Memory per idle connection (RSS), ${connections} connections`,
        unit: 'KB',
        value: cppRss,
        baseline: rawRss,
        target: ratioTarget('≤', IDLE_RATIO_TARGET),
      }),
      figure({
        id: 'memory.idle-connection.heap',
        label: 'Memory per idle connection (V8 heap)',
        unit: 'KB',
        value: of('cpp', (run) => run.heap),
        baseline: { label: 'raw ws', value: of('raw', (run) => run.heap) },
      }),
      figure({
        id: 'memory.open-thread.rss',
        label: 'Memory per idle connection with an open empty thread (RSS)',
        unit: 'KB',
        value: of('cpp', (run) => run.withThread!.rss),
        baseline: rawRss,
        target: ratioTarget('≤', OPEN_THREAD_RATIO_TARGET),
      }),
      ...(details.socketio
        ? [
            // CPP is to hold a connection in at most what Socket.IO does.
            figure({
              id: 'memory.idle-connection.rss.vs-socketio',
              label: 'Memory per idle connection (RSS), CPP ÷ Socket.IO',
              unit: 'KB',
              value: cppRss,
              baseline: { label: 'Socket.IO', value: of('socketio', (run) => run.rss) },
              target: ratioTarget('≤', 1),
            }),
            figure({
              id: 'memory.idle-connection.heap.vs-socketio',
              label: 'Memory per idle connection (V8 heap), CPP ÷ Socket.IO',
              unit: 'KB',
              value: of('cpp', (run) => run.heap),
              baseline: { label: 'Socket.IO', value: of('socketio', (run) => run.heap) },
            }),
          ]
        : []),
    ],
    details,
  };
}

async function idleMemory(context: BenchContext, server: RunningServer): Promise<MemoryRun> {
  const connections = context.options.idleConnections;
  await warmUp(context, server);
  const before = await server.process.request<MemoryFigures>('memory');
  await context.load.request('idle', { url: server.url, kind: server.kind, count: connections });
  await sleep(SETTLE_MS);
  const perConnection = (after: MemoryFigures) => ({
    rss: (after.rss - before.rss) / connections,
    heap: (after.heapUsed - before.heapUsed) / connections,
  });
  const run: MemoryRun = { connections, ...perConnection(await server.process.request<MemoryFigures>('memory')) };
  if (server.kind === 'cpp') {
    await context.load.request('openThreads');
    await sleep(SETTLE_MS);
    run.withThread = perConnection(await server.process.request<MemoryFigures>('memory'));
  }
  // Last: writing a snapshot grows the process.
  if (context.options.profile)
    context.log(
      `heap snapshot: ${await server.process.request<string>('heapSnapshot', { directory: PROFILE_DIRECTORY })}`,
    );
  return run;
}

/**
 * One connection opened (for CPP, with its thread) and closed before the first reading, on every server alike: what
 * a server starts once, with its first connection or its store's first write, is not a cost per connection. CPP's
 * SQLite store starts its checkpointing thread with its first write, about 10 MB of RSS once per server, which
 * divided by the connections read as 2 KB each at 5,000.
 */
async function warmUp(context: BenchContext, server: RunningServer): Promise<void> {
  await context.load.request('idle', { url: server.url, kind: server.kind, count: 1 });
  if (server.kind === 'cpp') await context.load.request('openThreads');
  await context.load.request('closeAll');
  await sleep(SETTLE_MS);
}
