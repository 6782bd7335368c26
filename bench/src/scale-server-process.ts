import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { readImportItem } from '@promethea/cpp-protocol';
import { CPPServer, type ConversationStore, type StoredThread } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { serveRequests } from './bench-process.js';
import { LoopGapWatch, type LoopGapSplit } from './loop-gap-split.js';
import { randomWords, syntheticConversation } from './synthetic-history.js';

/** Which store the scale section's server keeps its threads in. */
export type ScaleServerConfig = { store: 'sqlite' } | { store: 'postgres'; databaseUrl: string; schema: string };

export interface ScaleServerReady {
  port: number;
}

/** A history grown to `threads`: how long the last growth took. */
export interface Grown {
  threads: number;
  ms: number;
  /** Ids of threads spread over the whole history, for opening. */
  sample: string[];
}

const MESSAGES = 20;
const BATCH = 256;
/**
 * Ids kept per growth for the opens, spread over its threads: at least the opens of a size and their warm-up (30 +
 * 10), which a fixed step of 97 threads did not give at 100 threads (no figure there, so no ratio).
 */
const SAMPLES_PER_GROWTH = 100;
const LOOP_DELAY_RESOLUTION_MS = 5;
const NS_PER_MS = 1e6;
/** The bench asks as fast as the server answers, and imports as often as it measures. */
const BENCH_LIMITS = { framesPerSecond: 0, syncsPerMinute: 0, searchesPerMinute: 0, maxThreadsPerDid: 0 };

const config = JSON.parse(process.argv[2]!) as ScaleServerConfig;
const directory = mkdtempSync(join(tmpdir(), 'cpp-bench-scale-'));
const store: ConversationStore =
  config.store === 'sqlite'
    ? SqliteStore.open(join(directory, 'scale.sqlite'))
    : await PostgresStore.open({ connectionString: config.databaseUrl, schema: config.schema });
const server = new CPPServer({ port: 0, host: '127.0.0.1', store, limits: BENCH_LIMITS });
await server.ready;
const words = randomWords(41);
const grown = new Map<string, { threads: number; sample: string[] }>();
let loopDelay: IntervalHistogram | undefined;
const gapWatch = new LoopGapWatch();

/** The event loop's delays while watched, in ms, and the longest gap's split (Linux). */
export interface LoopBlock {
  p99: number;
  max: number;
  split?: LoopGapSplit;
}

serveRequests({ port: server.port } satisfies ScaleServerReady, {
  /**
   * Grows the identity's history to `to` threads of 20 messages, oldest first as an export is, straight into the
   * store in one transaction per growth: what a server finds on a long-lived database. Not timed as a figure.
   */
  grow: async ({ ownerDid, to }: { ownerDid: string; to: number }): Promise<Grown> => {
    const history = grown.get(ownerDid) ?? { threads: 0, sample: [] };
    const started = performance.now();
    const from = history.threads;
    const sampleEvery = Math.max(1, Math.floor((to - from) / SAMPLES_PER_GROWTH));
    async function* batches(): AsyncGenerator<StoredThread[]> {
      for (let first = from; first < to; first += BATCH) {
        const batch: StoredThread[] = [];
        for (let index = first; index < Math.min(first + BATCH, to); index += 1) {
          const conversation = syntheticConversation(index, MESSAGES, words);
          for (const { title, createdAt, updatedAt, graph } of readImportItem('chatgpt', conversation, index, 0)) {
            batch.push({ threadId: graph.threadId, ownerDid, title, createdAt, updatedAt, graph });
            if ((index - from) % sampleEvery === 0) history.sample.push(graph.threadId);
          }
        }
        yield batch;
      }
    }
    await store.importThreadBatches(batches());
    // A long-lived file has merged its index's segments: the SQLite store merges them between turns, after the write.
    if (store instanceof SqliteStore) await store.whenIndexesMerged();
    history.threads = Math.max(from, to);
    grown.set(ownerDid, history);
    return { threads: history.threads, ms: performance.now() - started, sample: history.sample };
  },
  loopDelayStart: () => {
    loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
    loopDelay.enable();
    gapWatch.start();
  },
  loopDelayStop: async (): Promise<LoopBlock> => {
    if (!loopDelay) throw new Error('loopDelayStart was not called');
    // The index merges that the import's writes call for run on the same event loop, after the import's answer.
    if (store instanceof SqliteStore) await store.whenIndexesMerged();
    loopDelay.disable();
    const split = gapWatch.stop();
    return { p99: loopDelay.percentile(99) / NS_PER_MS, max: loopDelay.max / NS_PER_MS, ...(split ? { split } : {}) };
  },
  stop: async () => {
    await server.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  },
});
