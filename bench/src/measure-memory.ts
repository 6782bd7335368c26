import { setTimeout as sleep } from 'node:timers/promises';
import { PROFILE_DIRECTORY, type BenchContext, type RunningServer } from './bench-context.js';
import { figure, type Figure } from './figure.js';
import { median } from './latency-recorder.js';
import type { ServerKind } from './load-stream.js';
import type { MemoryFigures } from './server-process.js';

const KB = 1024;
const TARGET_KB = 15;
const SETTLE_MS = 500;

interface MemoryRun {
  connections: number;
  /** Bytes per connection: RSS and V8 heap, after collecting garbage. */
  rss: number;
  heap: number;
  /** CPP only: once each connection has opened an empty thread. */
  withThread?: { rss: number; heap: number };
}

/**
 * Measure 4: server memory per idle connection (upgraded, nothing sent) at N connections, as RSS delta / N after a
 * full garbage collection; against the same number of connections to a bare ws server. CPP's figure with one
 * empty open thread per connection is reported too, since that is what an idle web client holds.
 */
export async function measureMemory(context: BenchContext): Promise<{ figures: Figure[]; details: Record<ServerKind, MemoryRun[]> }> {
  const details: Record<ServerKind, MemoryRun[]> = { cpp: [], raw: [] };
  for (let run = 0; run < context.options.runs; run += 1) {
    for (const kind of (run % 2 === 0 ? ['cpp', 'raw'] : ['raw', 'cpp']) as ServerKind[]) {
      context.log(`memory: ${context.options.idleConnections} idle connections, ${kind}, run ${run + 1}/${context.options.runs}`);
      const server = await context.startServer(kind);
      try {
        details[kind].push(await idleMemory(context, server));
      } finally {
        await context.finish(server);
      }
    }
  }
  const of = (kind: ServerKind, value: (run: MemoryRun) => number) => median(details[kind].map(value)) / KB;
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
        target: { text: `≤ ${TARGET_KB} KB`, met: cppRss <= TARGET_KB },
      }),
      figure({ id: 'memory.idle-connection.heap', label: 'Memory per idle connection (V8 heap)', unit: 'KB', value: of('cpp', (run) => run.heap), baseline: { label: 'raw ws', value: of('raw', (run) => run.heap) } }),
      figure({ id: 'memory.open-thread.rss', label: 'Memory per idle connection with an open empty thread (RSS)', unit: 'KB', value: of('cpp', (run) => run.withThread!.rss), baseline: rawRss }),
    ],
    details,
  };
}

async function idleMemory(context: BenchContext, server: RunningServer): Promise<MemoryRun> {
  const connections = context.options.idleConnections;
  const before = await server.process.request<MemoryFigures>('memory');
  await context.load.request('idle', { url: server.url, kind: server.kind, count: connections });
  await sleep(SETTLE_MS);
  const perConnection = (after: MemoryFigures) => ({ rss: (after.rss - before.rss) / connections, heap: (after.heapUsed - before.heapUsed) / connections });
  const run: MemoryRun = { connections, ...perConnection(await server.process.request<MemoryFigures>('memory')) };
  if (server.kind === 'cpp') {
    await context.load.request('openThreads');
    await sleep(SETTLE_MS);
    run.withThread = perConnection(await server.process.request<MemoryFigures>('memory'));
  }
  // Last: writing a snapshot grows the process.
  if (context.options.profile) context.log(`heap snapshot: ${await server.process.request<string>('heapSnapshot', { directory: PROFILE_DIRECTORY })}`);
  return run;
}
