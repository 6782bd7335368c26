import { CPP_SUBPROTOCOL, decodeServerFrame, type ServerFrame, type ServerFrameType } from '@promethea/cpp-protocol';
import WebSocket from 'ws';

type FrameOf<Type extends ServerFrameType> = Extract<ServerFrame, { type: Type }>;

/**
 * A bare WebSocket client speaking CPP by hand, as a client written from docs/PROTOCOL.md would. Every frame it
 * receives is validated against the protocol's schemas: a server frame that does not match fails the test.
 */
export class RawClient {
  readonly frames: ServerFrame[] = [];
  readonly invalid: string[] = [];
  private waiters: { predicate: (frame: ServerFrame) => boolean; resolve: (frame: ServerFrame) => void }[] = [];
  private cursor = 0;
  closeCode: number | undefined;
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(String(data)));
    this.closed = new Promise((resolve) =>
      socket.on('close', (code) => {
        this.closeCode = code;
        resolve(code);
      }),
    );
  }

  static async connect(url: string, options: { did?: string; protocols?: string[] } = {}): Promise<RawClient> {
    const headers = options.did ? { 'X-Client-Sovereign-DID': options.did } : undefined;
    const socket = new WebSocket(url, options.protocols ?? [CPP_SUBPROTOCOL], headers ? { headers } : {});
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  send(type: string, payload: unknown, extra: Record<string, unknown> = {}): void {
    this.socket.send(JSON.stringify({ type, timestamp: Date.now(), payload, ...extra }));
  }

  sendRaw(data: string | Buffer): void {
    this.socket.send(data);
  }

  /** The next frame of `type` (after those already taken), optionally also matching `predicate`. */
  next<Type extends ServerFrameType>(type: Type, predicate: (frame: FrameOf<Type>) => boolean = () => true, timeoutMs = 10_000): Promise<FrameOf<Type>> {
    const matches = (frame: ServerFrame): frame is FrameOf<Type> => frame.type === type && predicate(frame as FrameOf<Type>);
    for (let index = this.cursor; index < this.frames.length; index += 1) {
      const frame = this.frames[index]!;
      if (matches(frame)) {
        this.cursor = index + 1;
        return Promise.resolve(frame);
      }
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} within ${timeoutMs} ms; got ${this.frames.slice(this.cursor).map((f) => f.type).join(', ')}`)), timeoutMs);
      this.waiters.push({
        predicate: matches,
        resolve: (frame) => {
          clearTimeout(timer);
          this.cursor = this.frames.indexOf(frame) + 1;
          resolve(frame as FrameOf<Type>);
        },
      });
    });
  }

  /** Every frame received so far of `type`. */
  all<Type extends ServerFrameType>(type: Type): FrameOf<Type>[] {
    return this.frames.filter((frame): frame is FrameOf<Type> => frame.type === type);
  }

  close(): Promise<number> {
    this.socket.close();
    return this.closed;
  }

  private receive(text: string): void {
    const decoded = decodeServerFrame(text);
    if (!decoded.ok) {
      this.invalid.push(`${decoded.message}: ${text.slice(0, 200)}`);
      return;
    }
    this.frames.push(decoded.frame);
    const waiter = this.waiters.find((candidate) => candidate.predicate(decoded.frame));
    if (waiter) {
      this.waiters = this.waiters.filter((candidate) => candidate !== waiter);
      waiter.resolve(decoded.frame);
    }
  }
}
