import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { newMessageId, newThreadId } from '@promethea/cpp-protocol';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type BenchContext, PROFILE_DIRECTORY } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { monotonicNow } from './clock.js';
import { type AnswerEnd, Member, sessionUrl } from './fanout-member.js';
import type { MembersConnect } from './fanout-members.js';
import type { FanoutServerConfig, FanoutServerReady } from './fanout-server.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';

/** Members with the thread open, the owner among them: the issue's 1, 10 and 100. */
const SIZES = [1, 10, 100] as const;
/** 100 tokens at 10 ms: one second of answer, each token stamped with when the model sent it. */
const TOKEN_INTERVAL_MS = 10;
const ANSWER_TOKENS = 100;
/** Per round and size; the rounds take the sizes in turn, forwards then backwards, so that all see the same load. */
const ANSWERS_PER_ROUND = 1;
const PIVOTS_PER_ROUND = 8;
const ROUNDS_PER_RUN = 3;
/** Chunks the pivoting member has before it pivots: the answer is well under way. */
const CHUNKS_BEFORE_PIVOT = 5;
const CHUNK_TARGET = 1.5;
const HALTED_TARGET = 2;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface SizeFigures {
  members: number;
  /** Every round's samples together. */
  chunkDelay: LatencySummary;
  /** From the pivoting member's CPP_PIVOT_INIT to each member's CPP_STREAM_HALTED. */
  halted: LatencySummary;
  /** Each round's p99, in the order the rounds ran: how much one round's figure moves. */
  chunkP99ByRound: number[];
  haltedP99ByRound: number[];
}

interface Placement {
  where: string;
  /** Load average (1 min) when this placement's measure began and ended. */
  load: [number, number];
  sizes: SizeFigures[];
  /** The median over rounds of each round's p99 at 100 members ÷ at 1. */
  medianRoundRatio: { chunk: number; halted: number };
}

interface FanoutDetails {
  oneServer: Placement;
  twoNodes: Placement | { error: string };
}

/**
 * Measure 8 (issue 34): one answer streamed to a shared thread with 1, 10 and 100 members connected, on one server and
 * with the members spread over two nodes of a cluster (two server processes on PostgreSQL and Redis). A chunk's delay
 * is read from the token it carries (when the model sent it) against the member's receipt; a pivot by one member is
 * timed to the CPP_STREAM_HALTED of each member. The three threads stay open with their members connected for the
 * whole measure, and the rounds take the sizes in turn (1, 10, 100, then 100, 10, 1, …), so that each size sees the
 * machine's load as the others do; every size is held to the single member's figures of the same servers.
 */
export async function measureFanout(context: BenchContext): Promise<{ figures: Figure[]; details: FanoutDetails }> {
  const rounds = ROUNDS_PER_RUN * context.options.runs;
  const oneServer = await measurePlacement(context, rounds, 'one server', undefined);
  const twoNodes = await measurePlacement(context, rounds, 'two cluster nodes (PostgreSQL + Redis)', {
    databaseUrl: context.options.databaseUrl,
    redisUrl: REDIS_URL,
  }).catch((error: unknown) => ({ error: String(error) }));
  const figures = [
    ...figuresOf(oneServer, 'one server', 'fanout'),
    ...('error' in twoNodes ? [] : figuresOf(twoNodes, 'two cluster nodes', 'fanout.cluster')),
  ];
  return { figures, details: { oneServer, twoNodes } };
}

/**
 * Each figure is the median over rounds of the round's p99, against the same for one member: a p99 of one member's
 * few samples in a round is its slowest one, which a single stall of the machine sets; the median of rounds that took
 * the sizes in turn is what the sizes cost, not when the machine stalled.
 */
function figuresOf({ sizes }: Placement, where: string, prefix: string): Figure[] {
  const [single] = sizes;
  if (!single) return [];
  return sizes.slice(1).flatMap(({ members, chunkP99ByRound, haltedP99ByRound }) => [
    figure({
      id: `${prefix}.chunk.p99.${members}`,
      label: `chunk delay p99, ${members} members, ${where}`,
      unit: 'ms',
      value: median(chunkP99ByRound),
      baseline: { label: 'one member', value: median(single.chunkP99ByRound) },
      ...(members === 100 ? { target: ratioTarget('≤', CHUNK_TARGET) } : {}),
    }),
    figure({
      id: `${prefix}.halted.p99.${members}`,
      label: `pivot by one member → HALTED at every member p99, ${members} members, ${where}`,
      unit: 'ms',
      value: median(haltedP99ByRound),
      baseline: { label: 'one member', value: median(single.haltedP99ByRound) },
      ...(members === 100 ? { target: ratioTarget('≤', HALTED_TARGET) } : {}),
    }),
  ]);
}

/** The servers (one, or two nodes of a cluster) and the member processes for one placement. */
async function measurePlacement(
  context: BenchContext,
  rounds: number,
  where: string,
  cluster: { databaseUrl: string; redisUrl: string } | undefined,
): Promise<Placement> {
  const loadBefore = loadavg()[0]!;
  const shared = cluster && {
    ...cluster,
    schema: `cpp_bench_${randomBytes(6).toString('hex')}`,
    prefix: `cpp_bench_${randomBytes(6).toString('hex')}:`,
  };
  const config: FanoutServerConfig = {
    intervalMs: TOKEN_INTERVAL_MS,
    tokens: ANSWER_TOKENS,
    ...(shared ? { cluster: shared } : {}),
  };
  const started: BenchProcess<unknown>[] = [];
  try {
    // One after the other: the first node's migrations make the schema the second one finds.
    const servers: BenchProcess<FanoutServerReady>[] = [];
    for (let node = 0; node < (shared ? 2 : 1); node += 1) {
      const profile = context.options.profile
        ? [
            '--cpu-prof',
            '--cpu-prof-dir',
            PROFILE_DIRECTORY,
            '--cpu-prof-name',
            `fanout-${shared ? `node${node}` : 'one'}-${Date.now()}.cpuprofile`,
          ]
        : [];
      const server = await BenchProcess.start<FanoutServerReady>(
        './fanout-server.js',
        [JSON.stringify(config)],
        profile,
      );
      started.push(server);
      servers.push(server);
    }
    const urls = servers.map((server) => sessionUrl(server.info.port));
    // The members other than the owner, in as many processes as the machine has cores.
    const groups: BenchProcess<unknown>[] = [];
    for (let index = 0; index < Math.max(1, availableParallelism()); index += 1) {
      const profile = context.options.profile
        ? [
            '--cpu-prof',
            '--cpu-prof-dir',
            PROFILE_DIRECTORY,
            '--cpu-prof-name',
            `fanout-members${index}-${Date.now()}.cpuprofile`,
          ]
        : [];
      const group = await BenchProcess.start('./fanout-members.js', [], profile);
      started.push(group);
      groups.push(group);
    }
    const sizes = await measureSizes(context, rounds, where, urls, groups);
    return {
      where,
      load: [loadBefore, loadavg()[0]!],
      sizes,
      medianRoundRatio: {
        chunk: medianRatio(sizes, (size) => size.chunkP99ByRound),
        halted: medianRatio(sizes, (size) => size.haltedP99ByRound),
      },
    };
  } finally {
    await Promise.all(started.map((process) => process.stop()));
    if (shared) await dropShared(shared);
  }
}

function medianRatio(sizes: SizeFigures[], byRound: (size: SizeFigures) => number[]): number {
  const single = byRound(sizes[0]!);
  const largest = byRound(sizes.at(-1)!);
  return median(largest.map((value, round) => value / single[round]!));
}

async function dropShared({ databaseUrl, redisUrl, schema, prefix }: NonNullable<FanoutServerConfig['cluster']>) {
  const pool = new pg.Pool({ connectionString: databaseUrl });
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => pool.end());
  const redis = new Redis(redisUrl);
  try {
    for (let cursor = '0'; ; ) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    redis.disconnect();
  }
}

/** A shared thread, its owner in this process and its other members in the member processes. */
interface SharedThread {
  threadId: string;
  members: number;
}

async function measureSizes(
  context: BenchContext,
  rounds: number,
  where: string,
  urls: string[],
  groups: BenchProcess<unknown>[],
): Promise<SizeFigures[]> {
  const largest = Math.max(...SIZES);
  const owner = await Member.connect(urls[0]!);
  try {
    // Member `place` (1 to 99) connects to node `place % 2` and lives in group `place % groups`.
    const dids: string[] = [];
    await Promise.all(
      groups.map(async (group, index) => {
        const places = Array.from({ length: largest - 1 }, (_, place) => place + 1).filter(
          (place) => place % groups.length === index,
        );
        const connected = await group.request<string[]>('connect', { urls, places } satisfies MembersConnect);
        for (const [at, place] of places.entries()) dids[place] = connected[at]!;
      }),
    );
    const threads: SharedThread[] = [];
    for (const members of SIZES) {
      const threadId = newThreadId();
      await owner.request({ type: 'CPP_THREAD_OPEN', payload: { threadId, patches: true } }, 'CPP_SYNC_GRAPH');
      for (let place = 1; place < members; place += 1)
        await owner.request(
          { type: 'CPP_MEMBER_ADD', payload: { threadId, did: dids[place], role: 'writer' } },
          'CPP_MEMBERS',
        );
      await Promise.all(groups.map((group) => group.request('open', { threadId, count: members })));
      threads.push({ threadId, members });
    }

    const chunks = threads.map(() => new LatencyRecorder());
    const halts = threads.map(() => new LatencyRecorder());
    const chunkP99ByRound = threads.map((): number[] => []);
    const haltedP99ByRound = threads.map((): number[] => []);
    // A round first that is not counted: the first fan-out to a hundred sockets compiles its paths at that size.
    for (const thread of threads) await measureRound(owner, groups, thread);
    for (let round = 0; round < rounds; round += 1) {
      const order = threads.map((_, index) => index);
      if (round % 2 === 1) order.reverse();
      context.log(
        `fanout (${where}): round ${round + 1} of ${rounds}, ${order.map((i) => SIZES[i]).join(', ')} members`,
      );
      for (const index of order) {
        const round = await measureRound(owner, groups, threads[index]!);
        for (const delay of round.chunks) chunks[index]!.record(delay);
        for (const delay of round.halts) halts[index]!.record(delay);
        chunkP99ByRound[index]!.push(percentile99(round.chunks));
        haltedP99ByRound[index]!.push(percentile99(round.halts));
      }
    }
    return threads.map(({ members }, index) => ({
      members,
      chunkDelay: chunks[index]!.summary(),
      halted: halts[index]!.summary(),
      chunkP99ByRound: chunkP99ByRound[index]!,
      haltedP99ByRound: haltedP99ByRound[index]!,
    }));
  } finally {
    owner.close();
  }
}

function percentile99(values: number[]): number {
  const recorder = new LatencyRecorder();
  for (const value of values) recorder.record(value);
  return recorder.percentile(99);
}

/** The answers and pivots of one round in one thread: the chunk delays and HALTED delays of all its members. */
async function measureRound(
  owner: Member,
  groups: BenchProcess<unknown>[],
  { threadId, members }: SharedThread,
): Promise<{ chunks: number[]; halts: number[] }> {
  /** How every member saw `nodeId` end; a bench that waits longer than a minute for it is stuck, and says so. */
  const ends = async (nodeId: string): Promise<AnswerEnd[]> => {
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`fanout: the end of ${nodeId} did not reach every member`)), 60_000);
    });
    const ended = Promise.all([
      owner.end(nodeId).then((end) => [end]),
      ...groups.map((group) => group.request<AnswerEnd[]>('ends', { nodeId, count: members })),
    ]);
    try {
      return (await Promise.race([ended, stuck])).flat();
    } finally {
      clearTimeout(timer);
    }
  };
  const prompt = (userPrompt: string) =>
    owner.send({ type: 'CPP_PROMPT', payload: { activeThreadId: threadId, userPrompt, newNodeId: newMessageId() } });

  const chunks: number[] = [];
  for (let answer = 0; answer < ANSWERS_PER_ROUND; answer += 1) {
    await Promise.all(groups.map((group) => group.request('record', { count: members })));
    owner.delays = [];
    const streaming = owner.streamingAfter(1, undefined);
    prompt(`Answer ${answer}`);
    await ends(await streaming);
    chunks.push(...owner.delays);
    owner.delays = undefined;
    for (const delays of await Promise.all(groups.map((group) => group.request<number[]>('delays'))))
      chunks.push(...delays);
  }

  // The owner pivots the streaming answer again and again, each pivot of the answer the one before started.
  const halts: number[] = [];
  let streaming = owner.streamingAfter(CHUNKS_BEFORE_PIVOT, undefined);
  prompt('Pivot me');
  let nodeId = await streaming;
  for (let pivot = 0; pivot < PIVOTS_PER_ROUND; pivot += 1) {
    streaming = owner.streamingAfter(CHUNKS_BEFORE_PIVOT, nodeId);
    const sentAt = monotonicNow();
    owner.send({
      type: 'CPP_PIVOT_INIT',
      payload: {
        activeThreadId: threadId,
        interruptedNodeId: nodeId,
        userPrompt: `Pivot ${pivot}`,
        newBranchNodeId: newMessageId(),
        receivedContentLength: owner.received.get(nodeId) ?? 0,
      },
    });
    // An answer the machine let finish before the pivot reached the server is not halted: that pivot is not timed.
    const ended = await ends(nodeId);
    if (ended.every((end) => end.type === 'CPP_STREAM_HALTED')) for (const { at } of ended) halts.push(at - sentAt);
    nodeId = await streaming;
  }
  // The last pivot's answer is stopped, so that the next round's thread streams alone.
  owner.send({
    type: 'CPP_STREAM_STOP',
    payload: { activeThreadId: threadId, nodeId, receivedContentLength: owner.received.get(nodeId) ?? 0 },
  });
  await ends(nodeId);
  return { chunks, halts };
}
