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

  constructor(intervalMs: number) {
    this.timer = setInterval(() => this.beat(), intervalMs);
    // The heartbeat alone never keeps a process alive.
    this.timer.unref();
  }

  watch(socket: WebSocket): void {
    this.answered.set(socket, true);
    socket.on('pong', () => this.answered.set(socket, true));
    socket.on('close', () => this.answered.delete(socket));
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
