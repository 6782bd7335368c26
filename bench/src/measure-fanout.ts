import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  CPP_SESSION_PATH,
  CPP_SUBPROTOCOL,
  authStatementBytes,
  didKeyFromEd25519PublicKey,
  encodeBase64Url,
  newMessageId,
  newThreadId,
} from '@promethea/cpp-protocol';
import { WebSocket } from 'ws';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { monotonicNow } from './clock.js';
import type { FanoutServerConfig, FanoutServerReady } from './fanout-server.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, type LatencySummary } from './latency-recorder.js';

/** Members with the thread open, the owner among them: the 1, 10 and 100. */
const SIZES = [1, 10, 100] as const;
/** 100 tokens at 10 ms: one second of answer, each token stamped with when the model sent it. */
const TOKEN_INTERVAL_MS = 10;
const ANSWER_TOKENS = 100;
const ANSWERS = 3;
const PIVOTS = 20;
/** Chunks the pivoting member has before it pivots: the answer is well under way. */
const CHUNKS_BEFORE_PIVOT = 5;
const CHUNK_TARGET = 1.5;
const HALTED_TARGET = 2;

interface SizeFigures {
  members: number;
  chunkDelay: LatencySummary;
  /** From a member's CPP_PIVOT_INIT to each member's CPP_STREAM_HALTED. */
  halted: LatencySummary;
}

interface FanoutDetails {
  oneInstance: SizeFigures[];
  twoInstances: SizeFigures[] | { error: string };
}

/**
 * Measure 8 (issue 34): one answer streamed to a shared thread with 1, 10 and 100 members connected, on one server and
 * with the members spread over two instances of a cluster. A chunk's delay is read from the token it carries (when
 * the model sent it) against the member's receipt; a pivot by one member is timed to the CPP_STREAM_HALTED of each
 * member. Each size is held to the single member's figures of the same servers in the same run.
 */
export async function measureFanout(context: BenchContext): Promise<{ figures: Figure[]; details: FanoutDetails }> {
  const oneInstance = await measureServers(context, 1);
  const twoInstances = await measureServers(context, 2).catch((error: unknown) => ({ error: String(error) }));
  const figures = [
    ...figuresOf(oneInstance, 'one server', 'fanout'),
    ...('error' in twoInstances ? [] : figuresOf(twoInstances, 'two cluster instances', 'fanout.cluster')),
  ];
  return { figures, details: { oneInstance, twoInstances } };
}

function figuresOf(sizes: SizeFigures[], where: string, prefix: string): Figure[] {
  const [single] = sizes;
  if (!single) return [];
  return sizes.slice(1).flatMap(({ members, chunkDelay, halted }) => [
    figure({
      id: `${prefix}.chunk.p99.${members}`,
      label: `chunk delay p99, ${members} members, ${where}`,
      unit: 'ms',
      value: chunkDelay.p99,
      baseline: { label: 'one member', value: single.chunkDelay.p99 },
      ...(members === 100 ? { target: ratioTarget('≤', CHUNK_TARGET) } : {}),
    }),
    figure({
      id: `${prefix}.halted.p99.${members}`,
      label: `pivot by one member → HALTED at every member p99, ${members} members, ${where}`,
      unit: 'ms',
      value: halted.p99,
      baseline: { label: 'one member', value: single.halted.p99 },
      ...(members === 100 ? { target: ratioTarget('≤', HALTED_TARGET) } : {}),
    }),
  ]);
}

async function measureServers(context: BenchContext, instances: 1 | 2): Promise<SizeFigures[]> {
  const config: FanoutServerConfig = { instances, intervalMs: TOKEN_INTERVAL_MS, tokens: ANSWER_TOKENS };
  const servers = await BenchProcess.start<FanoutServerReady>('./fanout-server.js', [JSON.stringify(config)]);
  try {
    const urls = servers.info.ports.map((port) => `ws://127.0.0.1:${port}${CPP_SESSION_PATH}`);
    const results: SizeFigures[] = [];
    for (const members of SIZES) {
      context.log(`fanout: ${members} members on ${instances} instance(s)`);
      results.push(await measureSize(urls, members));
    }
    return results;
  } finally {
    await servers.stop();
  }
}

/** One shared thread with `size` members connected (the owner first), spread over the instances in turn. */
async function measureSize(urls: string[], size: number): Promise<SizeFigures> {
  const owner = await Member.connect(urls[0]!);
  const threadId = newThreadId();
  const members = [owner];
  try {
    await owner.request({ type: 'CPP_THREAD_OPEN', payload: { threadId, patches: true } }, 'CPP_SYNC_GRAPH');
    for (let index = 1; index < size; index += 1) {
      const member = await Member.connect(urls[index % urls.length]!);
      members.push(member);
      const add = { type: 'CPP_MEMBER_ADD', payload: { threadId, did: member.did, role: 'writer' } };
      await owner.request(add, 'CPP_MEMBERS');
    }
    await Promise.all(
      members
        .slice(1)
        .map((member) =>
          member.request({ type: 'CPP_THREAD_OPEN', payload: { threadId, patches: true } }, 'CPP_SYNC_GRAPH'),
        ),
    );

    const chunkDelay = new LatencyRecorder();
    for (let answer = 0; answer < ANSWERS; answer += 1) {
      const ends = members.map((member) => member.next('CPP_STREAM_COMPLETED'));
      for (const member of members) member.delays = chunkDelay;
      owner.send({
        type: 'CPP_PROMPT',
        payload: { activeThreadId: threadId, userPrompt: `Answer ${answer}`, newNodeId: newMessageId() },
      });
      await Promise.all(ends);
      for (const member of members) member.delays = undefined;
    }

    // Pivots by the last member to join (the owner when alone), each of the answer the one before started.
    const pivoter = members.at(-1)!;
    const halted = new LatencyRecorder();
    let streaming = pivoter.streamingAfter(CHUNKS_BEFORE_PIVOT, undefined);
    owner.send({
      type: 'CPP_PROMPT',
      payload: { activeThreadId: threadId, userPrompt: 'Pivot me', newNodeId: newMessageId() },
    });
    for (let pivot = 0; pivot < PIVOTS; pivot += 1) {
      const nodeId = await streaming;
      streaming = pivoter.streamingAfter(CHUNKS_BEFORE_PIVOT, nodeId);
      const seen = members.map((member) =>
        member.next('CPP_STREAM_HALTED', (frame) => frame.interruptedNodeId === nodeId),
      );
      const sentAt = monotonicNow();
      pivoter.send({
        type: 'CPP_PIVOT_INIT',
        payload: {
          activeThreadId: threadId,
          interruptedNodeId: nodeId,
          userPrompt: `Pivot ${pivot}`,
          newBranchNodeId: newMessageId(),
          receivedContentLength: pivoter.received.get(nodeId) ?? 0,
        },
      });
      for (const receivedAt of await Promise.all(seen)) halted.record(receivedAt - sentAt);
    }
    return { members: size, chunkDelay: chunkDelay.summary(), halted: halted.summary() };
  } finally {
    for (const member of members) member.close();
  }
}

type Payload = Record<string, unknown>;

/** A member's connection, its identity proven by its own Ed25519 key. */
class Member {
  /** Where the delays of the chunks it receives go, while an answer is measured. */
  delays: LatencyRecorder | undefined;
  /** The code units received of each node's text. */
  readonly received = new Map<string, number>();
  private readonly waiters = new Set<{
    type: string;
    matches: (payload: Payload) => boolean;
    resolve: (at: number) => void;
  }>();
  private readonly chunkWaiters = new Set<{
    count: number;
    other: string | undefined;
    resolve: (nodeId: string) => void;
  }>();
  private chunks = new Map<string, number>();

  private constructor(
    private readonly socket: WebSocket,
    readonly did: string,
  ) {
    socket.on('message', (data: Buffer) => this.receive(data.toString('utf8'), monotonicNow()));
  }

  static async connect(url: string): Promise<Member> {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const did = didKeyFromEd25519PublicKey(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    const socket = new WebSocket(url, [CPP_SUBPROTOCOL], { headers: { 'X-Client-Sovereign-DID': did } });
    const member = new Member(socket, did);
    const challenge = new Promise<Payload>((resolve) =>
      socket.on('message', (data: Buffer) => {
        const frame = JSON.parse(data.toString('utf8')) as { type: string; payload: Payload };
        if (frame.type === 'CPP_AUTH_CHALLENGE') resolve(frame.payload);
      }),
    );
    await new Promise<void>((resolve, reject) => socket.once('open', resolve).once('error', reject));
    await member.prove(await challenge, privateKey);
    return member;
  }

  send(frame: { type: string; payload: Payload }): void {
    this.socket.send(JSON.stringify({ ...frame, id: newMessageId(), timestamp: Date.now() }));
  }

  async request(frame: { type: string; payload: Payload }, answer: string): Promise<void> {
    const answered = this.next(answer);
    this.send(frame);
    await answered;
  }

  /** When the next frame of `type` (whose payload matches) arrives, on the monotonic clock. */
  next(type: string, matches: (payload: Payload) => boolean = () => true): Promise<number> {
    return new Promise((resolve) => this.waiters.add({ type, matches, resolve }));
  }

  /** The node, other than `other`, of which this member has received `count` chunks. */
  streamingAfter(count: number, other: string | undefined): Promise<string> {
    return new Promise((resolve) => this.chunkWaiters.add({ count, other, resolve }));
  }

  close(): void {
    this.socket.terminate();
  }

  private async prove(challenge: Payload, privateKey: KeyObject): Promise<void> {
    const statement = authStatementBytes({
      did: this.did,
      audience: challenge.audience as string,
      nonce: challenge.nonce as string,
      expiresAt: challenge.expiresAt as number,
    });
    const signature = encodeBase64Url(sign(null, statement, privateKey));
    await this.request(
      { type: 'CPP_AUTH_PROOF', payload: { did: this.did, nonce: challenge.nonce, signature } },
      'CPP_AUTH_ACCEPTED',
    );
  }

  private receive(text: string, at: number): void {
    const frame = JSON.parse(text) as { type: string; payload: Payload };
    if (frame.type === 'CPP_ERROR') throw new Error(`a member was refused: ${text}`);
    if (frame.type === 'CPP_STREAM_CHUNK') this.chunk(frame.payload, at);
    for (const waiter of this.waiters) {
      if (waiter.type !== frame.type || !waiter.matches(frame.payload)) continue;
      this.waiters.delete(waiter);
      waiter.resolve(at);
    }
  }

  private chunk(payload: Payload, at: number): void {
    const nodeId = payload.nodeId as string;
    const delta = payload.delta as string;
    if (payload.part === undefined || payload.part === 'content')
      this.received.set(nodeId, (this.received.get(nodeId) ?? 0) + delta.length);
    // Each token is the monotonic time the model sent it: a chunk carrying several is as late as its first.
    const sent = Number.parseFloat(delta);
    if (this.delays && Number.isFinite(sent)) this.delays.record(at - sent);
    const chunks = (this.chunks.get(nodeId) ?? 0) + 1;
    this.chunks.set(nodeId, chunks);
    for (const waiter of this.chunkWaiters) {
      if (nodeId === waiter.other || chunks < waiter.count) continue;
      this.chunkWaiters.delete(waiter);
      waiter.resolve(nodeId);
    }
  }
}
