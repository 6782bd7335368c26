import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BenchSocket } from './bench-socket.js';
import { clientFrame, startStreamingThread } from './cpp-frames.js';
import { figure, valueTarget, type Figure } from './figure.js';
import { LatencyRecorder, type LatencySummary } from './latency-recorder.js';
import { formatTable } from './report.js';

/**
 * npm run bench:cluster — pivot halt latency in cluster mode: two cpp-server processes on one PostgreSQL and one
 * Redis. Same node: the client pivots an answer its own node writes. Cross node: the client is on node A and the
 * answer is written on node B, so the pivot travels A → Redis → B and the halt B → Redis → A.
 */
const CLI = fileURLToPath(new URL('../../packages/server/dist/cli/cpp-server.js', import.meta.url));
const CHUNKS_BETWEEN_PIVOTS = 2;
/** What a pivot may cost for crossing nodes: two Redis hops (~0.1 ms each on loopback) and the fan-out, with room. */
const CROSS_NODE_ALLOWANCE_MS = 2;
/** What a pivot sent just after its generating node died may take beyond the recovery: a pivot's own time, with room. */
const AFTER_RECOVERY_ALLOWANCE_MS = 100;
const DEMO_DELAY_MS = 10;

const { values: options } = parseArgs({
  options: {
    pivots: { type: 'string', default: '200' },
    failovers: { type: 'string', default: '5' },
    'database-url': { type: 'string', default: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    'redis-url': { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
  },
});
const pivots = Number(options.pivots);
const failovers = Number(options.failovers);
const databaseUrl = options['database-url'];
const redisUrl = options['redis-url'];
const schema = `cpp_bench_${randomBytes(6).toString('hex')}`;
const prefix = `cpp_bench_${randomBytes(6).toString('hex')}:`;

interface Node {
  url: string;
  process: ChildProcess;
}

async function startNode(): Promise<Node> {
  const args = [
    CLI,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--no-ui',
    '--no-metrics',
    '--log-level',
    'warn',
    '--demo-delay-ms',
    String(DEMO_DELAY_MS),
  ];
  const environment = {
    ...process.env,
    CPP_AUTH: 'claimed',
    CPP_STORE: 'postgres',
    DATABASE_URL: databaseUrl,
    CPP_DATABASE_SCHEMA: schema,
    REDIS_URL: redisUrl,
    CPP_REDIS_PREFIX: prefix,
  };
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: environment });
  // Its warnings (claimed identities) are no news here; they are shown only when it fails to start.
  let errors = '';
  child.stderr!.on('data', (data: Buffer) => (errors += data.toString()));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /^cpp-server listening on (ws:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`cpp-server exited (${code}) before listening:\n${errors}`)));
  });
  return { url, process: child };
}

/** Pivots the streaming answer `pivots` times from `probe`, timing PIVOT_INIT → CPP_STREAM_HALTED there. */
async function timePivots(probe: BenchSocket, threadId: string, firstNodeId: string): Promise<LatencySummary> {
  const halted = new LatencyRecorder();
  let nodeId = firstNodeId;
  const warmUp = Math.ceil(pivots / 10);
  for (let index = 0; index < warmUp + pivots; index += 1) {
    for (let chunk = 0; chunk < CHUNKS_BETWEEN_PIVOTS; chunk += 1)
      await probe.next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId === nodeId);
    const interruptedNodeId = nodeId;
    const haltedFrame = probe.next('CPP_STREAM_HALTED');
    const newChunk = probe.next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId !== interruptedNodeId);
    const sentAt = performance.now();
    probe.send(
      clientFrame('CPP_PIVOT_INIT', {
        activeThreadId: threadId,
        interruptedNodeId,
        userPrompt: `another direction (${index})`,
        newBranchNodeId: newMessageId(),
      }),
    );
    const haltedAt = (await haltedFrame).receivedAt;
    nodeId = (await newChunk).frame.payload.nodeId;
    if (index >= warmUp) halted.record(haltedAt - sentAt);
  }
  return halted.summary();
}

async function sameNode(node: Node): Promise<LatencySummary> {
  const socket = await BenchSocket.connect(node.url, CPP_SUBPROTOCOL);
  try {
    const thread = await startStreamingThread(socket);
    return await timePivots(socket, thread.threadId, thread.nodeId);
  } finally {
    socket.close();
  }
}

async function crossNode(clientNode: Node, generatingNode: Node): Promise<LatencySummary> {
  const writer = await BenchSocket.connect(generatingNode.url, CPP_SUBPROTOCOL);
  const probe = await BenchSocket.connect(clientNode.url, CPP_SUBPROTOCOL);
  try {
    const thread = await startStreamingThread(writer);
    const synced = probe.next('CPP_SYNC_GRAPH');
    probe.send(clientFrame('CPP_THREAD_OPEN', { threadId: thread.threadId, patches: true }));
    await synced;
    return await timePivots(probe, thread.threadId, thread.nodeId);
  } finally {
    writer.close();
    probe.close();
  }
}

async function cleanUp(nodes: Node[]): Promise<void> {
  for (const node of nodes) {
    node.process.kill('SIGTERM');
    if (node.process.exitCode === null) await once(node.process, 'exit');
  }
  const pool = new pg.Pool({ connectionString: databaseUrl });
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.end();
  const redis = new Redis(redisUrl);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}

/** Cross-node p50 beside the same-node one; the target is the same-node figure of this run plus the allowance. */
function crossNodeFigure(same: LatencySummary, cross: LatencySummary): Figure {
  const bound = same.p50 + CROSS_NODE_ALLOWANCE_MS;
  return figure({
    id: 'cluster.pivot.halted.p50.cross-node',
    label: 'Pivot → HALTED p50, client on A, generation on B',
    unit: 'ms',
    value: cross.p50,
    baseline: { label: 'same node p50', value: same.p50 },
    target: valueTarget('≤', bound, `≤ same node + ${CROSS_NODE_ALLOWANCE_MS} ms (${bound.toFixed(2)} ms)`),
  });
}

/**
 * The generating node dies (SIGKILL) while its answer streams to a client of the surviving node. Without a pivot:
 * the time until the survivor has recovered the answer (its client gets the node as `interrupted`: the lock
 * expired and a sweep committed it). With one sent at once: the time until the new branch's first chunk.
 */
async function afterDeath(survivor: Node, withPivot: boolean): Promise<number> {
  const doomed = await startNode();
  const writer = await BenchSocket.connect(doomed.url, CPP_SUBPROTOCOL);
  const probe = await BenchSocket.connect(survivor.url, CPP_SUBPROTOCOL);
  try {
    const thread = await startStreamingThread(writer);
    const synced = probe.next('CPP_SYNC_GRAPH');
    probe.send(clientFrame('CPP_THREAD_OPEN', { threadId: thread.threadId, patches: true }));
    await synced;
    // The survivor relays the answer: its client is following the stream when the node dies.
    await probe.next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId === thread.nodeId);
    const recovered = probe.next('CPP_GRAPH_PATCH', (frame) =>
      Object.values(frame.payload.nodes).some((node) => node.id === thread.nodeId && node.status === 'interrupted'),
    );
    const newChunk = probe.next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId !== thread.nodeId);
    const exited = once(doomed.process, 'exit');
    doomed.process.kill('SIGKILL');
    const killedAt = performance.now();
    if (!withPivot) {
      newChunk.catch(() => undefined);
      return (await recovered).receivedAt - killedAt;
    }
    recovered.catch(() => undefined);
    probe.send(
      clientFrame('CPP_PIVOT_INIT', {
        activeThreadId: thread.threadId,
        interruptedNodeId: thread.nodeId,
        userPrompt: 'another direction',
        newBranchNodeId: newMessageId(),
      }),
    );
    const answeredAt = (await newChunk).receivedAt;
    await exited;
    return answeredAt - killedAt;
  } finally {
    writer.close();
    probe.close();
    if (doomed.process.exitCode === null && doomed.process.signalCode === null) doomed.process.kill('SIGKILL');
  }
}

async function failoverSamples(survivor: Node, withPivot: boolean): Promise<LatencySummary> {
  const times = new LatencyRecorder();
  for (let sample = 0; sample < failovers; sample += 1) times.record(await afterDeath(survivor, withPivot));
  return times.summary();
}

/** A pivot sent just after the generating node died is to wait only as long as the recovery takes. */
function failoverFigure(recovery: LatencySummary, pivot: LatencySummary): Figure {
  const bound = recovery.p50 + AFTER_RECOVERY_ALLOWANCE_MS;
  return figure({
    id: 'cluster.pivot.after-node-death.p50',
    label: "Pivot just after the generating node died → new branch's 1st chunk p50",
    unit: 'ms',
    value: pivot.p50,
    baseline: { label: 'recovery without a pivot p50', value: recovery.p50 },
    target: valueTarget('≤', bound, `≤ recovery + ${AFTER_RECOVERY_ALLOWANCE_MS} ms (${bound.toFixed(0)} ms)`),
  });
}

function row(label: string, summary: LatencySummary): string {
  const ms = (value: number) => value.toFixed(2).padStart(7);
  return `| ${label.padEnd(38)} | ${ms(summary.p50)} | ${ms(summary.p99)} | ${ms(summary.max)} |`;
}

await promisify(execFile)(process.execPath, [
  CLI,
  'migrate',
  '--database-url',
  databaseUrl,
  '--database-schema',
  schema,
]);
const nodes = [await startNode(), await startNode()];
try {
  const same = await sameNode(nodes[0]!);
  const cross = await crossNode(nodes[0]!, nodes[1]!);
  const recovery = await failoverSamples(nodes[0]!, false);
  const pivotAfterDeath = await failoverSamples(nodes[0]!, true);
  console.log(
    `\nPivot → CPP_STREAM_HALTED in cluster mode: 2 cpp-server processes, PostgreSQL and Redis on this machine,`,
  );
  console.log(
    `demo model at ${DEMO_DELAY_MS} ms a word, ${pivots} pivots each (after ${Math.ceil(pivots / 10)} to warm up)\n`,
  );
  console.log('| client and generation                  |  p50 ms |  p99 ms |  max ms |');
  console.log('| -------------------------------------- | ------: | ------: | ------: |');
  console.log(row('same node', same));
  console.log(row('client on node A, generation on node B', cross));
  console.log(row('generating node killed, recovery', recovery));
  console.log(row('generating node killed, pivot', pivotAfterDeath));
  console.log(
    `\nThe last two from the kill of the generating node (SIGKILL), ${failovers} times each: until the client of the other node`,
  );
  console.log(
    `gets the answer as interrupted (no pivot), or the new branch's first chunk of a pivot sent to it at once.\n`,
  );
  console.log(formatTable([crossNodeFigure(same, cross), failoverFigure(recovery, pivotAfterDeath)]));
} finally {
  await cleanUp(nodes);
}
