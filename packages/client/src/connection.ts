import { ErrorCode, decodeServerFrame, encodeClientFrame, type ClientFrame, type DecodeFailure, type ServerFrame } from '@promethea/cpp-protocol';
import { ConnectionClosedError } from './connection-closed-error.js';
import type { WebSocketLike } from './web-socket-like.js';

export type ConnectionStatus = 'connecting' | 'open' | 'closed';

export interface ConnectionHandlers {
  frame(frame: ServerFrame): void;
  invalidFrame(failure: DecodeFailure): void;
  statusChanged(status: ConnectionStatus, closedError?: ConnectionClosedError): void;
}

const NORMAL_CLOSURE = 1000;

/**
 * One session socket. Frames sent before it opens wait and go out in order once it does; every text it receives
 * is decoded and validated here, the client's one edge.
 */
export class Connection {
  private currentStatus: ConnectionStatus = 'connecting';
  private readonly queue: string[] = [];
  private closedError: ConnectionClosedError | undefined;
  private readonly opened: Promise<void>;
  private readonly closed: Promise<void>;

  constructor(
    private readonly socket: WebSocketLike,
    private readonly handlers: ConnectionHandlers,
  ) {
    socket.addEventListener('open', () => this.markOpen());
    socket.addEventListener('close', (event) => this.markClosed(new ConnectionClosedError(event.code, event.reason)));
    socket.addEventListener('message', (event) => this.receive(event.data));
    // A socket error is always followed by 'close', which settles everything; `ws` needs a listener regardless.
    socket.addEventListener('error', () => undefined);
    this.opened = new Promise((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      socket.addEventListener('close', () => reject(this.closedError));
    });
    this.closed = new Promise((resolve) => socket.addEventListener('close', () => resolve()));
    // Nobody has to call ready(): a connection that never opens is reported through the status instead.
    this.opened.catch(() => undefined);
  }

  get status(): ConnectionStatus {
    return this.currentStatus;
  }

  /** Resolves once the socket is open; rejects with the close when it never opens. */
  ready(): Promise<void> {
    return this.opened;
  }

  send(frame: ClientFrame): void {
    if (this.closedError) throw this.closedError;
    const text = encodeClientFrame(frame);
    if (this.currentStatus === 'open') this.socket.send(text);
    else this.queue.push(text);
  }

  /** The error that pending and later requests fail with, once the socket has closed. */
  get closeReason(): ConnectionClosedError | undefined {
    return this.closedError;
  }

  async close(): Promise<void> {
    if (this.currentStatus !== 'closed') this.socket.close(NORMAL_CLOSURE);
    await this.closed;
  }

  private markOpen(): void {
    this.currentStatus = 'open';
    for (const text of this.queue.splice(0)) this.socket.send(text);
    this.handlers.statusChanged('open');
  }

  private markClosed(error: ConnectionClosedError): void {
    this.currentStatus = 'closed';
    this.closedError = error;
    this.queue.length = 0;
    this.handlers.statusChanged('closed', error);
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') {
      this.handlers.invalidFrame({ ok: false, code: ErrorCode.BAD_FRAME, message: 'server sent a binary frame' });
      return;
    }
    const decoded = decodeServerFrame(data);
    if (decoded.ok) this.handlers.frame(decoded.frame);
    else this.handlers.invalidFrame(decoded);
  }
}
