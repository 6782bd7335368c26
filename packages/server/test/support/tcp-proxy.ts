import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy on a free port of 127.0.0.1 in front of a service the machine shares (PostgreSQL, Redis), which the
 * tests must never stop: cutting the proxy is, for whoever connects through it, the service going down, and
 * restoring it the service coming back on the same address.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private server = createServer();
  /** Chosen at the first start, kept when restored. */
  private listeningPort = 0;

  private constructor(private readonly target: { host: string; port: number }) {}

  get port(): number {
    return this.listeningPort;
  }

  /** Listens in front of `url`'s host and port (`redis://…`, `postgres://…`). */
  static async start(url: string): Promise<TcpProxy> {
    const { hostname, port } = new URL(url);
    const target = { host: hostname, port: Number(port) };
    const proxy = new TcpProxy(target);
    await proxy.listen();
    return proxy;
  }

  /** `url` with this proxy's port in place of the service's. */
  url(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }

  /** The service goes down: every connection is reset, and new ones are refused until `restore`. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
    await closed;
  }

  /** The service is back on the same address. */
  async restore(): Promise<void> {
    this.server = createServer();
    await this.listen();
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.cut();
  }

  private async listen(): Promise<void> {
    this.server.on('connection', (client) => this.forward(client));
    this.server.listen(this.listeningPort, '127.0.0.1');
    await once(this.server, 'listening');
    this.listeningPort = (this.server.address() as AddressInfo).port;
  }

  private forward(client: Socket): void {
    const service = connect(this.target.port, this.target.host);
    for (const socket of [client, service]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => this.sockets.delete(socket));
    }
    // One side closing or failing closes the other, as a dropped connection would.
    client.on('close', () => service.destroy());
    service.on('close', () => client.destroy());
    client.pipe(service);
    service.pipe(client);
  }
}
