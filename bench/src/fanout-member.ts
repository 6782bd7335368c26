import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  CPP_SESSION_PATH,
  CPP_SUBPROTOCOL,
  authStatementBytes,
  didKeyFromEd25519PublicKey,
  encodeBase64Url,
  newMessageId,
} from '@promethea/cpp-protocol';
import { WebSocket } from 'ws';
import { monotonicNow } from './clock.js';

export type Payload = Record<string, unknown>;

/** How a member saw an answer end, and when (on the monotonic clock). */
export interface AnswerEnd {
  type: 'CPP_STREAM_COMPLETED' | 'CPP_STREAM_HALTED';
  at: number;
}

export function sessionUrl(port: number): string {
  return `ws://127.0.0.1:${port}${CPP_SESSION_PATH}`;
}

/**
 * A member's connection, its identity proven by its own Ed25519 key. Each message is stamped when its socket delivers
 * it and parsed only after every socket that had data in the same turn of the event loop has been stamped: a member's
 * delay is then not the time its process spent parsing the other members' copies of the same chunk.
 */
export class Member {
  /** Where the delays of the chunks it receives go, while an answer is measured. */
  delays: number[] | undefined;
  /** The code units received of each node's text. */
  readonly received = new Map<string, number>();
  /** How and when each answer ended, by node id. */
  private readonly ends = new Map<string, AnswerEnd>();
  private readonly endWaiters = new Map<string, ((end: AnswerEnd) => void)[]>();
  private readonly waiters = new Set<{ type: string; resolve: (payload: Payload) => void }>();
  private readonly chunkWaiters = new Set<{
    count: number;
    other: string | undefined;
    resolve: (nodeId: string) => void;
  }>();
  private readonly chunks = new Map<string, number>();

  private constructor(
    private readonly socket: WebSocket,
    readonly did: string,
  ) {
    socket.on('message', (data: Buffer) => later(this, data.toString('utf8'), monotonicNow()));
  }

  static async connect(url: string): Promise<Member> {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const did = didKeyFromEd25519PublicKey(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
    const socket = new WebSocket(url, [CPP_SUBPROTOCOL], { headers: { 'X-Client-Sovereign-DID': did } });
    const member = new Member(socket, did);
    const challenge = member.next('CPP_AUTH_CHALLENGE');
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

  /** The payload of the next frame of `type`. */
  next(type: string): Promise<Payload> {
    return new Promise((resolve) => this.waiters.add({ type, resolve }));
  }

  /** How `nodeId` ended (already, or when it does): halted, or completed before a pivot reached it. */
  end(nodeId: string): Promise<AnswerEnd> {
    const end = this.ends.get(nodeId);
    if (end) return Promise.resolve(end);
    return new Promise((resolve) => this.endWaiters.set(nodeId, [...(this.endWaiters.get(nodeId) ?? []), resolve]));
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

  receive(text: string, at: number): void {
    const frame = JSON.parse(text) as { type: string; payload: Payload };
    if (frame.type === 'CPP_ERROR') throw new Error(`a member was refused: ${text}`);
    if (frame.type === 'CPP_STREAM_CHUNK') this.chunk(frame.payload, at);
    if (frame.type === 'CPP_STREAM_COMPLETED' || frame.type === 'CPP_STREAM_HALTED') {
      const nodeId = (frame.payload.nodeId ?? frame.payload.interruptedNodeId) as string;
      const end: AnswerEnd = { type: frame.type, at };
      this.ends.set(nodeId, end);
      for (const resolve of this.endWaiters.get(nodeId) ?? []) resolve(end);
      this.endWaiters.delete(nodeId);
    }
    for (const waiter of this.waiters) {
      if (waiter.type !== frame.type) continue;
      this.waiters.delete(waiter);
      waiter.resolve(frame.payload);
    }
  }

  private chunk(payload: Payload, at: number): void {
    const nodeId = payload.nodeId as string;
    const delta = payload.delta as string;
    if (payload.part === undefined || payload.part === 'content')
      this.received.set(nodeId, (this.received.get(nodeId) ?? 0) + delta.length);
    // Each token is the monotonic time the model sent it: a chunk carrying several is as late as its first.
    const sent = Number.parseFloat(delta);
    if (this.delays && Number.isFinite(sent)) this.delays.push(at - sent);
    const chunks = (this.chunks.get(nodeId) ?? 0) + 1;
    this.chunks.set(nodeId, chunks);
    for (const waiter of this.chunkWaiters) {
      if (nodeId === waiter.other || chunks < waiter.count) continue;
      this.chunkWaiters.delete(waiter);
      waiter.resolve(nodeId);
    }
  }
}

/** Messages stamped and not yet parsed, in the order they arrived. */
let arrived: { member: Member; text: string; at: number }[] = [];

function later(member: Member, text: string, at: number): void {
  if (arrived.length === 0) setImmediate(parseArrived);
  arrived.push({ member, text, at });
}

function parseArrived(): void {
  const batch = arrived;
  arrived = [];
  for (const { member, text, at } of batch) member.receive(text, at);
}
