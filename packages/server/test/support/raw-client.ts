import { CPP_SUBPROTOCOL, decodeServerFrame, type ServerFrame, type ServerFrameType } from '@promethea/cpp-protocol';
import WebSocket from 'ws';
import { FrameValidator } from '../../../../conformance/src/frame-validator.js';
import { WAIT_LIMIT_MS } from './eventually.js';

export type FrameOf<Type extends ServerFrameType> = Extract<ServerFrame, { type: Type }>;

export interface ConnectOptions {
  /** Sent as the X-Client-Sovereign-DID header. */
  did?: string;
  /** Subprotocols offered; `cpp-v1.0.0` by default. */
  protocols?: string[];
  /** Sent as the Origin header, as a browser page's connection has it. */
  origin?: string;
}

/** How the server answered an upgrade it refused. */
export interface UpgradeRefusal {
  status: number;
  contentType: string | undefined;
  body: string;
}

/**
 * A bare WebSocket client speaking CPP by hand, as a client written from docs/PROTOCOL.md would. Every frame it
 * receives is validated against the protocol's schemas and against the published JSON Schema files, as another
 * implementation would check it: a server frame that does not match fails the test.
 */
export class RawClient {
  readonly frames: ServerFrame[] = [];
  readonly invalid: string[] = [];
  private waiters: { predicate: (frame: ServerFrame) => boolean; resolve: (frame: ServerFrame) => void }[] = [];
  private cursor = 0;
  closeCode: number | undefined;
  closeReason: string | undefined;
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(String(data)));
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        resolve(code);
      }),
    );
  }

  static async connect(url: string, options: ConnectOptions = {}): Promise<RawClient> {
    const socket = open(url, options);
    // Listening before the socket opens: a server's first frame may arrive with the upgrade's answer.
    const client = new RawClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** Attempts an upgrade that the server is expected to refuse, and reports the HTTP answer. */
  static refusal(url: string, options: ConnectOptions = {}): Promise<UpgradeRefusal> {
    const socket = open(url, options);
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        socket.close();
        reject(new Error('the server accepted the upgrade'));
      });
      socket.once('error', reject);
      socket.once('unexpected-response', (request, response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body });
          request.destroy();
        });
      });
    });
  }

  /** The subprotocol the server selected. */
  get protocol(): string {
    return this.socket.protocol;
  }

  send(type: string, payload: unknown, extra: Record<string, unknown> = {}): void {
    this.socket.send(JSON.stringify({ type, timestamp: Date.now(), payload, ...extra }));
  }

  sendRaw(data: string | Buffer): void {
    this.socket.send(data);
  }

  /** The next frame of `type` (after those already taken), optionally also matching `predicate`. */
  next<Type extends ServerFrameType>(
    type: Type,
    predicate: (frame: FrameOf<Type>) => boolean = () => true,
    timeoutMs = WAIT_LIMIT_MS,
  ): Promise<FrameOf<Type>> {
    const matches = (frame: ServerFrame): frame is FrameOf<Type> =>
      frame.type === type && predicate(frame as FrameOf<Type>);
    return this.nextMatching(matches, type, timeoutMs);
  }

  /** The next frame (after those already taken) that `matches`; `description` names it in the timeout error. */
  nextMatching<Frame extends ServerFrame>(
    matches: (frame: ServerFrame) => frame is Frame,
    description: string,
    timeoutMs = WAIT_LIMIT_MS,
  ): Promise<Frame> {
    for (let index = this.cursor; index < this.frames.length; index += 1) {
      const frame = this.frames[index]!;
      if (matches(frame)) {
        this.cursor = index + 1;
        return Promise.resolve(frame);
      }
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((candidate) => candidate !== waiter);
        reject(
          new Error(
            `no ${description} within ${timeoutMs} ms; got ${this.frames.slice(this.cursor).map(describeFrame).join(', ')}`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        predicate: matches,
        resolve: (frame: ServerFrame) => {
          clearTimeout(timer);
          this.cursor = this.frames.indexOf(frame) + 1;
          resolve(frame as Frame);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Every frame received so far of `type`. */
  all<Type extends ServerFrameType>(type: Type): FrameOf<Type>[] {
    return this.frames.filter((frame): frame is FrameOf<Type> => frame.type === type);
  }

  /** A position in the frames received, for `since`. */
  mark(): number {
    return this.frames.length;
  }

  /** The frames received after `mark`. */
  since(mark: number): ServerFrame[] {
    return this.frames.slice(mark);
  }

  close(): Promise<number> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.close();
    return this.closed;
  }

  private receive(text: string): void {
    const published = publishedSchemas.validate(text);
    if (published.kind === 'invalid') this.invalid.push(published.message);
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

const publishedSchemas = new FrameValidator();

function open(url: string, options: ConnectOptions): WebSocket {
  const headers = options.did ? { 'X-Client-Sovereign-DID': options.did } : undefined;
  return new WebSocket(url, options.protocols ?? [CPP_SUBPROTOCOL], { headers, origin: options.origin });
}

function describeFrame(frame: ServerFrame): string {
  return frame.type === 'CPP_ERROR' ? `CPP_ERROR ${frame.payload.code}` : frame.type;
}
