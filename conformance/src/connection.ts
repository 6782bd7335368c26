import { CPP_SUBPROTOCOL, type ServerFrame } from '@promethea/cpp-protocol';
import WebSocket from 'ws';
import type { FrameValidator } from './frame-validator.js';
import { ThreadCopies } from './thread-copies.js';

export interface Handshake {
  url: string;
  protocols: string[];
  headers: Record<string, string>;
}

export interface CloseEvent {
  code: number;
  reason: string;
}

/** Raised when a connection waited in vain: the server sent nothing, or closed. */
export class WaitError extends Error {
  override readonly name = 'WaitError';
}

/**
 * One WebSocket connection of a scenario: frames the server sent wait in an inbox until a step takes them, and
 * every frame taken goes through the connection's copy of its threads, which reports broken rules.
 */
export class Connection {
  readonly copies = new ThreadCopies();
  /** Rules the server broke on this connection; any fails the scenario. */
  readonly violations: string[] = [];
  private readonly inbox: ServerFrame[] = [];
  private wake: (() => void) | undefined;
  private closeEvent: CloseEvent | undefined;

  private constructor(
    private readonly socket: WebSocket,
    validator: FrameValidator,
  ) {
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        this.violations.push('the server sent a binary frame');
        return;
      }
      const validation = validator.validate(String(data));
      if (validation.kind === 'invalid') this.violations.push(validation.message);
      if (validation.kind === 'frame') this.inbox.push(validation.frame);
      this.wake?.();
    });
    // A transport error (e.g. a reset while sending a frame the server refuses) is followed by 'close', which steps see.
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => {
      this.closeEvent = { code, reason: reason.toString() };
      this.wake?.();
    });
  }

  static async open(handshake: Handshake, validator: FrameValidator, timeoutMs: number): Promise<Connection> {
    const socket = new WebSocket(handshake.url, handshake.protocols, {
      headers: handshake.headers,
      handshakeTimeout: timeoutMs,
    });
    // Listening before the upgrade completes: a frame the server sends at once (CPP_AUTH_CHALLENGE) can arrive with
    // the 101 response and be emitted before code awaiting 'open' resumes, and would otherwise be lost.
    const connection = new Connection(socket, validator);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
      socket.once('unexpected-response', (_, response) =>
        reject(new Error(`the server refused the upgrade with HTTP ${response.statusCode}`)),
      );
    });
    if (socket.protocol !== CPP_SUBPROTOCOL) {
      socket.terminate();
      throw new Error(`the server selected the subprotocol "${socket.protocol}", not ${CPP_SUBPROTOCOL}`);
    }
    return connection;
  }

  send(data: string | Buffer): void {
    this.socket.send(data);
  }

  /** The next frame the server sent, waiting up to `timeoutMs` for it. */
  async take(timeoutMs: number): Promise<ServerFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.inbox.shift();
      if (frame) return frame;
      // A frame that broke a rule was not queued: report it instead of waiting in vain.
      if (this.violations[0]) throw new WaitError(this.violations[0]);
      if (this.closeEvent)
        throw new WaitError(`the server closed the connection (${this.closeEvent.code} ${this.closeEvent.reason})`);
      if (Date.now() >= deadline) throw new WaitError(`no frame within ${timeoutMs} ms`);
      await this.until(deadline);
    }
  }

  /** Waits for the server to close the connection; frames still arriving go through the copies. */
  async closed(timeoutMs: number): Promise<CloseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let frame = this.inbox.shift(); frame; frame = this.inbox.shift()) this.observe(frame);
      if (this.closeEvent) return this.closeEvent;
      if (Date.now() >= deadline) throw new WaitError(`the connection was not closed within ${timeoutMs} ms`);
      await this.until(deadline);
    }
  }

  /** Applies a taken frame to the copies, recording any rule it breaks. */
  observe(frame: ServerFrame): void {
    this.violations.push(...this.copies.observe(frame));
  }

  /** The frames received but never taken, each applied to the copies; the scenario is over. */
  drain(): ServerFrame[] {
    const rest = this.inbox.splice(0);
    for (const frame of rest) this.observe(frame);
    return rest;
  }

  async close(): Promise<void> {
    if (this.closeEvent) return;
    this.socket.close(1000);
    await this.closed(5_000).catch(() => this.socket.terminate());
  }

  private until(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
