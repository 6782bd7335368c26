import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';

/**
 * A TCP server on 127.0.0.1 that accepts every connection and never sends a byte, as a server that hangs, or a
 * proxy that black-holes the path, does to a WebSocket upgrade. It counts what it accepted and what is still open.
 */
export class BlackHole {
  private readonly held = new Set<Socket>();
  private readonly waiters: Array<() => void> = [];
  accepted = 0;

  private constructor(private readonly server: Server) {
    server.on('connection', (socket) => {
      this.accepted += 1;
      this.held.add(socket);
      // What it receives is read and dropped: unread bytes would keep it from seeing the other side close.
      socket.resume();
      socket.on('error', () => undefined);
      socket.on('close', () => this.changed(() => this.held.delete(socket)));
      this.changed(() => undefined);
    });
  }

  static async start(): Promise<BlackHole> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new BlackHole(server);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}${CPP_SESSION_PATH}`;
  }

  /** How many accepted connections the other side has not closed yet. */
  get open(): number {
    return this.held.size;
  }

  /** Resolves once `test` holds (checked now and after each connection accepted or closed). */
  async until(test: (hole: BlackHole) => boolean): Promise<void> {
    while (!test(this)) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const socket of this.held) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(change: () => void): void {
    change();
    for (const wake of this.waiters.splice(0)) wake();
  }
}
