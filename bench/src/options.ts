import { parseArgs } from 'node:util';
import { DEFAULT_CHUNK_INTERVAL_MS } from '@promethea/cpp-server';
import { PEERS, type PeerKind } from './load-target.js';

export const MEASURES = [
  'pivot',
  'gateway',
  'capacity',
  'memory',
  'sync',
  'scale',
  'context',
  'models',
  'tools',
  'fanout',
  'upload',
] as const;
export type Measure = (typeof MEASURES)[number];

export interface BenchOptions {
  quick: boolean;
  /** Repetitions of each latency and memory measure; the report shows the median of the runs. */
  runs: number;
  /** Concurrent streaming sessions under which pivots are timed (the probe's own stream included). */
  loads: number[];
  /** Timed pivots (and echoes) per run and load, after a warm-up of a tenth as many. */
  pivots: number;
  gatewaySamples: number;
  capacityStart: number;
  capacityMax: number;
  capacityWindowMs: number;
  /** Bisection steps between the last load that held and the first that did not. */
  capacityRefine: number;
  idleConnections: number;
  syncNodes: number;
  syncAnswerChars: number;
  syncSamples: number;
  /** Threads of 20 messages in one identity at which the scale section measures, smallest first. */
  scaleSizes: number[];
  /** Conversations of 20 messages in the export the scale section imports (20,000: about 250 MB). */
  scaleImportConversations: number;
  /** Samples of each latency the scale section times, per size. */
  scaleSamples: number;
  /** PostgreSQL for the scale section, beside SQLite; `none` leaves it out. */
  databaseUrl: string;
  /** Milliseconds between tokens: 20 is 50 tokens/s. */
  intervalMs: number;
  /** The shortest time between two chunks of one answer, on both servers (CPPServer's `chunkIntervalMs`; 0: a chunk per token). */
  chunkIntervalMs: number;
  store: 'sqlite' | 'memory';
  only: Measure[];
  /** The peers measured beside CPP: capacity (both), memory (Socket.IO), pivot (SSE). */
  peers: PeerKind[];
  /** Write CPU profiles of every server process (CPP and raw) to bench/profiles/. */
  profile: boolean;
  out: string;
}

type Sized = Omit<BenchOptions, 'quick' | 'store' | 'only' | 'peers' | 'profile' | 'out'>;

const FULL: Sized = {
  runs: 3,
  loads: [1, 100, 1000],
  pivots: 150,
  gatewaySamples: 200,
  capacityStart: 500,
  capacityMax: 8000,
  capacityWindowMs: 4000,
  capacityRefine: 2,
  idleConnections: 5000,
  syncNodes: 10_000,
  syncAnswerChars: 500,
  syncSamples: 20,
  scaleSizes: [100, 10_000, 100_000],
  scaleImportConversations: 20_000,
  scaleSamples: 30,
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
  intervalMs: 20,
  chunkIntervalMs: DEFAULT_CHUNK_INTERVAL_MS,
};

/** About a minute: the same measures, smaller. */
const QUICK: Sized = {
  runs: 1,
  loads: [1, 100],
  pivots: 60,
  gatewaySamples: 60,
  capacityStart: 100,
  capacityMax: 400,
  capacityWindowMs: 2000,
  capacityRefine: 0,
  idleConnections: 1000,
  syncNodes: 2000,
  syncAnswerChars: 500,
  syncSamples: 5,
  scaleSizes: [100, 1_000, 5_000],
  scaleImportConversations: 2_000,
  scaleSamples: 10,
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/test',
  intervalMs: 20,
  chunkIntervalMs: DEFAULT_CHUNK_INTERVAL_MS,
};

const HELP = `npm run bench -- [options]     (each option may also be set as BENCH_<NAME>, e.g. BENCH_RUNS=5)
  --quick                   small sizes, one run: about a minute
  --only pivot,gateway,...  measures to run: ${MEASURES.join(', ')}
  --peers socketio,sse      peers measured beside CPP (default both; none: CPP and its baselines only)
  --runs N  --loads 1,100,1000  --pivots N  --gateway-samples N
  --capacity-start N  --capacity-max N  --capacity-window-ms N  --capacity-refine N
  --idle-connections N  --sync-nodes N  --sync-answer-chars N  --sync-samples N
  --scale-sizes 100,10000,100000  threads of 20 messages in one identity at which the scale section measures
  --scale-import-conversations N  conversations in the export it imports (20000: about 250 MB)  --scale-samples N
  --database-url URL        PostgreSQL for the scale section beside SQLite (default the local test database; none: SQLite only)
  --interval-ms N           pause between tokens (20 = 50 tokens/s)
  --chunk-interval-ms N     shortest time between two chunks of an answer, CPP and raw (default ${DEFAULT_CHUNK_INTERVAL_MS}; 0: one per token)
  --store sqlite|memory     the CPP server's store (default sqlite, as the CLI)
  --profile                 CPU profiles of the server processes (cpp-*, raw-*) in bench/profiles/
  --out FILE                where the JSON goes (default bench/results/latest.json)`;

const NUMBER_OPTIONS = [
  'runs',
  'pivots',
  'gateway-samples',
  'capacity-start',
  'capacity-max',
  'capacity-window-ms',
  'capacity-refine',
  'idle-connections',
  'sync-nodes',
  'sync-answer-chars',
  'sync-samples',
  'scale-import-conversations',
  'scale-samples',
  'interval-ms',
  'chunk-interval-ms',
] as const;

/** Flags win over BENCH_* environment variables, which win over the full (or --quick) defaults. */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean' },
      only: { type: 'string' },
      peers: { type: 'string' },
      loads: { type: 'string' },
      'scale-sizes': { type: 'string' },
      'database-url': { type: 'string' },
      store: { type: 'string' },
      out: { type: 'string' },
      ...Object.fromEntries(NUMBER_OPTIONS.map((name) => [name, { type: 'string' as const }])),
    },
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const read = (name: string): string | undefined =>
    (values as Record<string, string | boolean | undefined>)[name]?.toString() ??
    env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
  const quick = read('quick') === 'true' || read('quick') === '1';
  const sized: Sized = { ...(quick ? QUICK : FULL) };
  for (const name of NUMBER_OPTIONS) {
    const text = read(name);
    if (text === undefined) continue;
    (sized as unknown as Record<string, number>)[camel(name)] = wholeNumber(name, text);
  }
  const loads = read('loads');
  if (loads !== undefined) sized.loads = loads.split(',').map((load) => wholeNumber('loads', load));
  const scaleSizes = read('scale-sizes');
  if (scaleSizes !== undefined)
    sized.scaleSizes = scaleSizes.split(',').map((size) => wholeNumber('scale-sizes', size));
  sized.databaseUrl = read('database-url') ?? env.DATABASE_URL ?? sized.databaseUrl;
  const store = read('store') ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'memory') throw new Error('--store must be sqlite or memory');
  const only = read('only')?.split(',') ?? [...MEASURES];
  for (const measure of only)
    if (!(MEASURES as readonly string[]).includes(measure))
      throw new Error(`unknown measure ${measure}; expected ${MEASURES.join(', ')}`);
  const peersText = read('peers');
  const peers = peersText === undefined ? [...PEERS] : peersText === 'none' ? [] : peersText.split(',');
  for (const peer of peers)
    if (!(PEERS as readonly string[]).includes(peer))
      throw new Error(`unknown peer ${peer}; expected ${PEERS.join(', ')} or none`);
  return {
    ...sized,
    quick,
    store,
    only: only as Measure[],
    peers: peers as PeerKind[],
    profile: read('profile') === 'true' || read('profile') === '1',
    out: read('out') ?? 'bench/results/latest.json',
  };
}

function wholeNumber(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, not ${text}`);
  return value;
}

function camel(name: string): string {
  return name.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
}
