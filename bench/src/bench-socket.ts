import type { ServerFrame } from '@promethea/cpp-protocol';
import type { Socket } from 'node:net';
import WebSocket from 'ws';

/** What the raw baseline sends back of its own: an echo (the text it keeps and resends is a CPP frame). */
export type BaselineFrame = { type: 'echo'; payload: { seq: number } };
export type AnyFrame = ServerFrame | BaselineFrame;

export interface Received {
  /** The frame's type, read from its envelope, which CPP and the baseline both begin with. */
  type: string;
  /** The frame, parsed when first asked for. */
  readonly frame: AnyFrame;
  /** `performance.now()` when the message event fired. */
  receivedAt: number;
  /** UTF-8 bytes of the frame (the WebSocket message, decompressed if it came compressed). */
  bytes: number;
  /** The frame as it came, for a measure that sends the same bytes elsewhere. */
  text: string;
}

interface Waiter {
  matches(received: Received): boolean;
  resolve(received: Received): void;
  reject(error: Error): void;
}

const WAIT_LIMIT_MS = 20_000;

const ENVELOPE_TYPE = /^\{"type":"([^"]+)"/;

/**
 * A benchmark client connection, to a CPP server or to the raw baseline. A frame is parsed, with a plain JSON.parse,
 * only when the measure looks into it, whichever server sent it: waiting for a frame of a type reads only its
 * envelope, so that the client's work on a large frame (a sync) is not timed for one server and not the other, nor
 * its garbage collected in the middle of the next measured transfer.
 */
export class BenchSocket {
  private readonly waiters = new Set<Waiter>();
  /** Called for every frame, before any waiter. */
  onFrame: ((received: Received) => void) | undefined;

  private constructor(
    private readonly socket: WebSocket,
    private readonly tcp: Socket,
  ) {
    socket.on('close', (code: number, reason: Buffer) =>
      this.failWaiters(`the connection closed (${code} ${reason.toString()})`),
    );
    socket.on('message', (data: Buffer) => {
      const receivedAt = performance.now();
      const text = data.toString('utf8');
      let parsed: AnyFrame | undefined;
      const frame = (): AnyFrame => (parsed ??= JSON.parse(text) as AnyFrame);
      const received: Received = {
        type: ENVELOPE_TYPE.exec(text)?.[1] ?? frame().type,
        get frame() {
          return frame();
        },
        receivedAt,
        bytes: data.byteLength,
        text,
      };
      this.onFrame?.(received);
      if (received.type === 'CPP_ERROR') {
        const { payload } = received.frame as Extract<AnyFrame, { type: 'CPP_ERROR' }>;
        return this.failWaiters(`the server answered CPP_ERROR ${payload.code}: ${payload.message}`);
      }
      for (const waiter of this.waiters) {
        if (!waiter.matches(received)) continue;
        this.waiters.delete(waiter);
        waiter.resolve(received);
      }
    });
  }

  /**
   * `offerCompression`: offer permessage-deflate, as browsers do (they then compress every frame they send, as ws
   * does here); off, the server cannot compress what it sends.
   */
  static connect(url: string, protocol?: string, { offerCompression = false } = {}): Promise<BenchSocket> {
    const socket = new WebSocket(url, protocol === undefined ? [] : [protocol], {
      perMessageDeflate: offerCompression,
      handshakeTimeout: WAIT_LIMIT_MS,
    });
    return new Promise((resolve, reject) => {
      let tcp: Socket | undefined;
      socket.once('upgrade', (response) => (tcp = response.socket));
      socket.once('open', () => {
        socket.off('error', reject);
        // A socket torn down under load must not crash the bench; the measure notices the missing frames.
        socket.on('error', () => socket.terminate());
        resolve(new BenchSocket(socket, tcp!));
      });
      socket.once('error', reject);
    });
  }

  /** Bytes read from the TCP socket so far: frames as they came over the wire, headers and compression included. */
  get wireBytesRead(): number {
    return this.tcp.bytesRead;
  }

  send(frame: object): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The next frame that matches, from now on. Register before sending what it answers. */
  next<Type extends AnyFrame['type']>(
    type: Type,
    matches?: (frame: Extract<AnyFrame, { type: Type }>) => boolean,
  ): Promise<Received & { frame: Extract<AnyFrame, { type: Type }> }> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        matches: (received) =>
          received.type === type &&
          (matches === undefined || matches(received.frame as Extract<AnyFrame, { type: Type }>)),
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
