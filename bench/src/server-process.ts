import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { writeHeapSnapshot } from 'node:v8';
import { newThreadId } from '@promethea/cpp-protocol';
import {
  CPPServer,
  MemoryStore,
  createModelProvider,
  type CPPServerOptions,
  type ConversationStore,
  type ModelProvider,
} from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { startBaselineServer, type BaselineServer } from './baseline-server.js';
import { serveRequests } from './bench-process.js';
import { cpuMs } from './cpu-time.js';
import { buildLargeThread, seedChange, type LargeThreadShape } from './large-thread.js';
import type { ServerKind } from './load-target.js';
import { PacedProvider } from './paced-provider.js';
import { startSocketIoServer } from './socketio-server.js';
import { startSseServer } from './sse-server.js';

/** How a server process is started: which server, which store, which model. */
export interface ServerConfig {
  kind: ServerKind;
  store: 'memory' | 'sqlite';
  model:
    | { kind: 'paced'; intervalMs: number; tokens: number }
    | {
        kind: 'openai-compatible';
        baseUrl: string;
        /** Offered as that many models (`model-1`, `model-2`, …), each its own provider: several per prompt. */
        models?: number;
      };
  /** The shortest time between two chunks of one answer, on either server. */
  chunkIntervalMs: number;
}

export interface ServerReady {
  port: number;
}

export interface MemoryFigures {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface LoopDelayFigures {
  p50: number;
  p99: number;
  max: number;
}

const NS_PER_MS = 1e6;
/**
 * The probe sends frames as fast as the server answers them (a thread and a prompt per gateway sample, a pivot
 * per halt; the gateway measure opens a new thread, a sync, 220 times a run on one connection), and the sync
 * measure builds a 10,000-node thread: limits made for people would refuse the bench.
 */
const BENCH_LIMITS = { maxNodesPerThread: 0, maxThreadBytes: 0, framesPerSecond: 0, syncsPerMinute: 0 };
/** Sampling period of the event-loop delay monitor; finer than the 20 ms target it checks. */
const LOOP_DELAY_RESOLUTION_MS = 5;

const config = JSON.parse(process.argv[2]!) as ServerConfig;
const directory = mkdtempSync(join(tmpdir(), 'cpp-bench-'));
const store: ConversationStore =
  config.store === 'sqlite' ? SqliteStore.open(join(directory, 'bench.sqlite')) : new MemoryStore();
const server = config.kind === 'cpp' ? await startCpp() : await startPacedServer(config.kind);
let loopDelay: IntervalHistogram | undefined;

serveRequests({ port: server.port } satisfies ServerReady, {
  memory: measureMemory,
  loopDelayStart: () => {
    loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    loopDelay.enable();
  },
  loopDelayStop: (): LoopDelayFigures => {
    if (!loopDelay) throw new Error('loopDelayStart was not called');
    loopDelay.disable();
    return {
      p50: loopDelay.percentile(50) / NS_PER_MS,
      p99: loopDelay.percentile(99) / NS_PER_MS,
      max: loopDelay.max / NS_PER_MS,
    };
  },
  cpuMs,
  /** Writes a heap snapshot (open it in Chrome DevTools → Memory) and returns its path. */
  heapSnapshot: ({ directory: folder }: { directory: string }) =>
    writeHeapSnapshot(join(folder, `${config.kind}-${Date.now()}.heapsnapshot`)),
  seedThread,
  stop: async () => {
    await server.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  },
});

async function startCpp(): Promise<BaselineServer> {
  // No cap on a thread's size: the sync measure grows a thread past the default 10,000 nodes.
  const cpp = new CPPServer({
    port: 0,
    host: '127.0.0.1',
    store,
    ...modelsOf(config.model),
    chunkIntervalMs: config.chunkIntervalMs,
    limits: BENCH_LIMITS,
  });
  await cpp.ready;
  return { port: cpp.port, close: () => cpp.close() };
}

/** The raw baseline or a peer: each pushes the paced model's chunks itself. */
async function startPacedServer(kind: Exclude<ServerKind, 'cpp'>): Promise<BaselineServer> {
  if (config.model.kind !== 'paced') throw new Error(`the ${kind} server streams paced tokens only`);
  const streams = { ...config.model, chunkIntervalMs: config.chunkIntervalMs };
  if (kind === 'socketio') return startSocketIoServer(streams);
  if (kind === 'sse') return startSseServer(streams);
  return startBaselineServer(streams);
}

/** The server's model, or its models when the config offers several. */
function modelsOf(model: ServerConfig['model']): Pick<CPPServerOptions, 'model' | 'models'> {
  if (model.kind === 'paced' || model.models === undefined) return { model: modelOf(model) };
  const count = model.models;
  return {
    models: Array.from({ length: count }, (_, index) => ({
      id: `model-${index + 1}`,
      label: `model ${index + 1}`,
      provider: modelOf(model),
    })),
  };
}

function modelOf(model: ServerConfig['model']): ModelProvider {
  if (model.kind === 'paced') return new PacedProvider(model.intervalMs, model.tokens);
  return createModelProvider({
    provider: 'openai-compatible',
    baseUrl: model.baseUrl,
    model: 'bench-model',
    maxRetries: 0,
  });
}

/** What is retained, not what awaits collection. */
async function measureMemory(): Promise<MemoryFigures> {
  await collectGarbage();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

/** Puts a large thread straight into the store, as a server restarted on a long-lived database would find it. */
async function seedThread(shape: LargeThreadShape): Promise<{ threadId: string; nodes: number; contentBytes: number }> {
  const threadId = newThreadId();
  const graph = buildLargeThread(threadId, shape);
  const now = Date.now();
  await store.createThread({
    threadId,
    ownerDid: 'anonymous',
    title: 'a long conversation',
    createdAt: now,
    updatedAt: now,
  });
  await store.commit(seedChange(graph), { updatedAt: now });
  const nodes = Object.values(graph.nodes);
  const seeded = {
    threadId,
    nodes: nodes.length,
    contentBytes: nodes.reduce((sum, node) => sum + Buffer.byteLength(node.content), 0),
  };
  // The graph and the commit's rows are garbage now, which a restarted server would not have: collected here, they
  // do not land on the opening of the thread that is measured next (~0.3 s of collection on this machine).
  await collectGarbage();
  return seeded;
}

/** Collects garbage until the heap settles. */
async function collectGarbage(): Promise<void> {
  for (let round = 0; round < 4; round += 1) {
    globalThis.gc?.();
    await nextTurn();
  }
}
