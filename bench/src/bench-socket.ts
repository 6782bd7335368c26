import type { ServerFrame } from '@promethea/cpp-protocol';
import WebSocket from 'ws';

/** What the raw baseline sends back: an echo, or (not JSON) the text of a requested size. */
export type BaselineFrame = { type: 'echo'; payload: { seq: number } } | { type: 'blob'; payload: Record<string, never> };
export type AnyFrame = ServerFrame | BaselineFrame;

export interface Received {
  frame: AnyFrame;
  /** `performance.now()` when the message event fired. */
  receivedAt: number;
  /** UTF-8 bytes of the frame on the wire (the WebSocket payload). */
  bytes: number;
}

interface Waiter {
  matches(frame: AnyFrame): boolean;
  resolve(received: Received): void;
  reject(error: Error): void;
}

const WAIT_LIMIT_MS = 20_000;

/**
 * A benchmark client connection, to a CPP server or to the raw baseline. Frames are parsed with a plain JSON.parse
 * on both, so that the client side costs the same whichever server it measures.
 */
export class BenchSocket {
  private readonly waiters = new Set<Waiter>();
  /** Called for every frame, before any waiter. */
  onFrame: ((received: Received) => void) | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('close', (code: number, reason: Buffer) => this.failWaiters(`the connection closed (${code} ${reason.toString()})`));
    socket.on('message', (data: Buffer) => {
      const receivedAt = performance.now();
      const text = data.toString('utf8');
      const frame = (text.charCodeAt(0) === 123 ? JSON.parse(text) : { type: 'blob', payload: {} }) as AnyFrame;
      const received = { frame, receivedAt, bytes: data.byteLength };
      this.onFrame?.(received);
      if (frame.type === 'CPP_ERROR') return this.failWaiters(`the server answered CPP_ERROR ${frame.payload.code}: ${frame.payload.message}`);
      for (const waiter of this.waiters) {
        if (!waiter.matches(frame)) continue;
        this.waiters.delete(waiter);
        waiter.resolve(received);
      }
    });
  }

  static connect(url: string, protocol?: string): Promise<BenchSocket> {
    const socket = new WebSocket(url, protocol === undefined ? [] : [protocol], { perMessageDeflate: false, handshakeTimeout: WAIT_LIMIT_MS });
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        socket.off('error', reject);
        // A socket torn down under load must not crash the bench; the measure notices the missing frames.
        socket.on('error', () => socket.terminate());
        resolve(new BenchSocket(socket));
      });
      socket.once('error', reject);
    });
  }

  send(frame: object): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The next frame that matches, from now on. Register before sending what it answers. */
  next<Type extends AnyFrame['type']>(type: Type, matches: (frame: Extract<AnyFrame, { type: Type }>) => boolean = () => true): Promise<Received & { frame: Extract<AnyFrame, { type: Type }> }> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        matches: (frame) => frame.type === type && matches(frame as Extract<AnyFrame, { type: Type }>),
        resolve: (received) => {
          clearTimeout(timer);
          resolve(received as Received & { frame: Extract<AnyFrame, { type: Type }> });
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no ${type} within ${WAIT_LIMIT_MS} ms`));
      }, WAIT_LIMIT_MS);
      this.waiters.add(waiter);
    });
  }

  close(): void {
    this.socket.terminate();
  }

  /** A CPP_ERROR or a close answers whatever was awaited: the bench stops instead of waiting out the limit. */
  private failWaiters(message: string): void {
    for (const waiter of this.waiters) waiter.reject(new Error(message));
    this.waiters.clear();
  }
}
