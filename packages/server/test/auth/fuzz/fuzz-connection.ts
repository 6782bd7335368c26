import {
  CPP_SUBPROTOCOL,
  type ErrorCode,
  decodeServerFrame,
  type ErrorFrame,
  type ServerFrame,
} from '@promethea/cpp-protocol';
import WebSocket from 'ws';
import type { TestIdentity } from '../support/did-key-identity.js';
import { EDGE_CODES, type IdPools, type WireFrame } from './fuzz-wire.js';

export type EdgeError = { code: ErrorCode; refId?: string };

/**
 * One fuzzing connection over a real WebSocket: it sends wire frames as they are, and sorts what comes back. Every
 * server frame must decode; errors from the decoding edge are kept in order, to be compared with what the fuzzer
 * expects; every other error is kept by code; the ids of threads and nodes go to the shared pools.
 */
export class FuzzConnection {
  readonly edgeErrors: EdgeError[] = [];
  readonly otherErrors: ErrorFrame['payload'][] = [];
  readonly invalidFrames: string[] = [];
  readonly closed: Promise<number>;
  private barrier: { id: string; resolve(): void } | undefined;
  private barriers = 0;

  private constructor(
    private readonly socket: WebSocket,
    private readonly pools: IdPools,
  ) {
    socket.on('message', (data, isBinary) => this.receive(isBinary ? '(binary)' : String(data)));
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve(code)));
  }

  /** Connects, and proves `identity` when given (otherwise the connection stays unauthenticated). */
  static async open(url: string, pools: IdPools, identity: TestIdentity | undefined): Promise<FuzzConnection> {
    const socket = new WebSocket(url, CPP_SUBPROTOCOL);
    const connection = new FuzzConnection(socket, pools);
    const challenge = new Promise<ServerFrame>((resolve) =>
      socket.once('message', (data) => resolve(JSON.parse(String(data)) as ServerFrame)),
    );
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const first = await challenge;
    if (identity && first.type === 'CPP_AUTH_CHALLENGE') {
      const accepted = new Promise<void>((resolve) => socket.once('message', () => resolve()));
      socket.send(
        JSON.stringify({
          type: 'CPP_AUTH_PROOF',
          timestamp: Date.now(),
          payload: { did: identity.did, nonce: first.payload.nonce, signature: identity.signChallenge(first.payload) },
        }),
      );
      await accepted;
    }
    return connection;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(frame: WireFrame): void {
    this.socket.send(frame.data, { binary: frame.binary });
  }

  /**
   * Resolves once every frame sent before it has been through the server's edge: the barrier is a frame of an
   * unknown type, refused at the edge in order with the others. Resolves too if the connection closes first.
   */
  async sync(): Promise<void> {
    const id = `barrier-${++this.barriers}`;
    const reached = new Promise<void>((resolve) => (this.barrier = { id, resolve }));
    this.socket.send(JSON.stringify({ type: 'CPP_FUZZ_BARRIER', timestamp: 0, id, payload: {} }));
    await Promise.race([reached, this.closed]);
  }

  /** The edge errors received so far, which are then forgotten. */
  takeEdgeErrors(): EdgeError[] {
    return this.edgeErrors.splice(0);
  }

  close(): Promise<number> {
    if (this.open) this.socket.close();
    return this.closed;
  }

  private receive(text: string): void {
    const decoded = decodeServerFrame(text);
    if (!decoded.ok) {
      this.invalidFrames.push(`${decoded.message}: ${text.slice(0, 200)}`);
      return;
    }
    const frame = decoded.frame;
    if (frame.type === 'CPP_ERROR') return this.receiveError(frame.payload);
    if (frame.type === 'CPP_SYNC_GRAPH' || frame.type === 'CPP_GRAPH_PATCH') {
      const { threadId } = frame.payload;
      remember(this.pools.threadIds, threadId);
      for (const nodeId of Object.keys(frame.payload.nodes)) {
        remember(this.pools.nodeIds, nodeId);
        this.pools.threadOfNode.set(nodeId, threadId);
      }
    }
  }

  private receiveError(error: ErrorFrame['payload']): void {
    if (this.barrier && error.refId === this.barrier.id) {
      this.barrier.resolve();
      this.barrier = undefined;
      return;
    }
    if (EDGE_CODES.includes(error.code as ErrorCode))
      this.edgeErrors.push({
        code: error.code as ErrorCode,
        refId: error.refId,
      });
    else this.otherErrors.push(error);
  }
}

/** Pools stay small so that picks hit the same threads and nodes often. */
function remember(pool: string[], id: string): void {
  if (pool.includes(id)) return;
  pool.push(id);
  if (pool.length > 200) pool.splice(0, pool.length - 200);
}
