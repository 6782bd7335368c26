import type { DecodeFailure, ServerFrame } from '@promethea/cpp-protocol';
import type { ClientPlatform } from './client-platform.js';
import { Connection } from './connection.js';
import { ConnectionClosedError } from './connection-closed-error.js';
import { isFinalClose, reconnectDelay, type ReconnectPolicy } from './reconnect-policy.js';
import type { WebSocketLike } from './web-socket-like.js';

/**
 * `connecting` until the first socket opens; `open` while the session works; `reconnecting` from the loss of an
 * established session until a new socket is open and the client has re-synced its threads; `closed` for good.
 */
export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface ReconnectingHandlers {
  frame(frame: ServerFrame): void;
  invalidFrame(failure: DecodeFailure): void;
  /** The session was lost and another attempt will follow. */
  lost(error: ConnectionClosedError): void;
  /** A new socket is open after a loss: the status turns `open` once this settles, if the socket still is. */
  resume(): Promise<void>;
  statusChanged(status: ConnectionStatus, closedError?: ConnectionClosedError): void;
}

const NORMAL_CLOSURE = 1000;

/**
 * The session's socket, replaced after a loss. Once a session has been established, a close that another
 * connection may cure (see `isFinalClose`) starts attempts, paced by the reconnect policy, until one opens or the
 * policy gives up. A first connection that never opens is not retried: the endpoint is wrong or the server is not
 * there, which the application should hear about at once.
 */
export class ReconnectingConnection {
  private current: Connection;
  private currentStatus: ConnectionStatus = 'connecting';
  private closedError: ConnectionClosedError | undefined;
  private socketOpen = false;
  private established = false;
  private closing = false;
  /** Attempts since the session was last open. */
  private attempts = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly observers = new Set<() => void>();

  constructor(
    private readonly openSocket: () => WebSocketLike,
    private readonly policy: ReconnectPolicy | undefined,
    private readonly handlers: ReconnectingHandlers,
    private readonly decode: ClientPlatform['decodeServerFrame'],
  ) {
    this.current = this.connect();
  }

  get status(): ConnectionStatus {
    return this.currentStatus;
  }

  /** Why the connection is closed for good, once it is. */
  get closeReason(): ConnectionClosedError | undefined {
    return this.closedError;
  }

  /** Sends on the current socket, which must be open (also while resuming, before the status is `open`). */
  send(text: string): void {
    if (!this.socketOpen) throw new Error('the CPP socket is not open');
    this.current.send(text);
  }

  /** Resolves when the status is (or next becomes) `open`; rejects when it becomes `closed` first. */
  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      const settle = (): boolean => {
        if (this.currentStatus === 'open') resolve();
        else if (this.currentStatus === 'closed') reject(this.closedError);
        else return false;
        return true;
      };
      if (settle()) return;
      const observer = () => {
        if (settle()) this.observers.delete(observer);
      };
      this.observers.add(observer);
    });
  }

  /** Closes with 1000 and stops reconnecting; resolves once closed. */
  async close(): Promise<void> {
    if (this.currentStatus === 'closed') return;
    this.closing = true;
    const closed = new Promise<void>((resolve) => {
      this.observers.add(() => {
        if (this.currentStatus === 'closed') resolve();
      });
    });
    if (this.retryTimer === undefined) this.current.close(NORMAL_CLOSURE);
    else this.finish(new ConnectionClosedError(NORMAL_CLOSURE, 'closed by the client'));
    await closed;
  }

  private connect(): Connection {
    const connection: Connection = new Connection(
      this.openSocket(),
      {
        open: () => this.opened(connection),
        frame: (frame) => {
          if (connection === this.current) this.handlers.frame(frame);
        },
        invalidFrame: (failure) => {
          if (connection === this.current) this.handlers.invalidFrame(failure);
        },
        close: (error) => this.dropped(connection, error),
      },
      this.decode,
    );
    return connection;
  }

  private opened(connection: Connection): void {
    if (connection !== this.current) return;
    this.socketOpen = true;
    if (!this.established) {
      this.established = true;
      this.setStatus('open');
      return;
    }
    const resumed = () => {
      if (connection !== this.current || !this.socketOpen || this.closing) return;
      this.attempts = 0;
      this.setStatus('open');
    };
    this.handlers.resume().then(resumed, resumed);
  }

  private dropped(connection: Connection, error: ConnectionClosedError): void {
    if (connection !== this.current) return;
    this.socketOpen = false;
    if (!this.mayRetry(error)) return this.finish(error);
    if (this.currentStatus !== 'reconnecting') {
      this.handlers.lost(error);
      this.setStatus('reconnecting');
    }
    this.attempts += 1;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        this.current = this.connect();
      },
      reconnectDelay(this.policy!, this.attempts),
    );
  }

  private mayRetry(error: ConnectionClosedError): boolean {
    if (this.closing || !this.policy || !this.established) return false;
    return !isFinalClose(error.code) && this.attempts < this.policy.maxAttempts;
  }

  private finish(error: ConnectionClosedError): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.closedError = error;
    this.setStatus('closed', error);
  }

  private setStatus(status: ConnectionStatus, closedError?: ConnectionClosedError): void {
    this.currentStatus = status;
    this.handlers.statusChanged(status, closedError);
    for (const observer of [...this.observers]) observer();
    if (status === 'closed') this.observers.clear();
  }
}
