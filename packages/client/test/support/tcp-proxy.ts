import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server, whose connections a test can cut at any moment: both sockets are
 * destroyed at once, as when a network path dies, so neither side gets a closing handshake.
 */
export class TcpProxy {
  private readonly links = new Set<[Socket, Socket]>();
  cuts = 0;

  private constructor(
    private readonly server: Server,
    /** Where new connections go; a test may point it elsewhere (the connections already made stay where they are). */
    public targetPort: number,
  ) {}

  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer();
    const proxy = new TcpProxy(server, targetPort);
    server.on('connection', (client) => proxy.link(client));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** How many connections pass through the proxy now. */
  get openLinks(): number {
    return this.links.size;
  }

  /** Cuts one connection chosen at random; false when there is none. */
  cutOne(random: () => number = Math.random): boolean {
    const links = [...this.links];
    const link = links[Math.floor(random() * links.length)];
    if (!link) return false;
    this.cut(link);
    return true;
  }

  async close(): Promise<void> {
    for (const link of this.links) this.cut(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private link(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort });
    const link: [Socket, Socket] = [client, upstream];
    this.links.add(link);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      if (!this.links.delete(link)) return;
      client.destroy();
      upstream.destroy();
    };
    for (const socket of link) {
      socket.on('error', drop);
      socket.on('close', drop);
    }
  }

  private cut(link: [Socket, Socket]): void {
    if (!this.links.delete(link)) return;
    this.cuts += 1;
    for (const socket of link) socket.destroy();
  }
}
