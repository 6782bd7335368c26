import type { WebSocket } from 'ws';

/**
 * WebSocket ping/pong keep-alive. Every interval each watched socket that answered the previous ping gets a new
 * one; a socket that did not answer is dropped at once (`terminate`, no closing handshake: a peer that does not
 * answer pings would not answer a close frame either). A dead peer is therefore gone within two intervals, and
 * its session's subscriptions with it.
 */
export class Heartbeat {
  private readonly answered = new Map<WebSocket, boolean>();
  private readonly timer: ReturnType<typeof setInterval>;
  /**
   * The listeners every watched socket shares (an emitter calls its listener with itself as `this`): two closures
   * per socket were ~150 bytes of every idle connection (issue 20).
   */
  private readonly onPong: (this: WebSocket) => void;
  private readonly onClose: (this: WebSocket) => void;

  constructor(intervalMs: number) {
    this.timer = setInterval(() => this.beat(), intervalMs);
    // The heartbeat alone never keeps a process alive.
    this.timer.unref();
    const { answered } = this;
    this.onPong = function (this: WebSocket) {
      answered.set(this, true);
    };
    this.onClose = function (this: WebSocket) {
      answered.delete(this);
    };
  }

  watch(socket: WebSocket): void {
    this.answered.set(socket, true);
    socket.on('pong', this.onPong);
    socket.on('close', this.onClose);
  }

  stop(): void {
    clearInterval(this.timer);
    this.answered.clear();
  }

  private beat(): void {
    for (const [socket, answered] of this.answered) {
      if (!answered) {
        this.answered.delete(socket);
        socket.terminate();
        continue;
      }
      this.answered.set(socket, false);
      socket.ping();
    }
  }
}
