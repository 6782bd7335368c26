import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/**
 * An application's own HTTP server, for a CPPServer to attach to: a page at every path and a WebSocket echo at
 * /echo; it leaves every other upgrade alone (those are the CPPServer's).
 */
export class ApplicationServer {
  readonly http: Server = createServer((_request, response) => response.end('the application'));

  private constructor() {
    const echo = new WebSocketServer({ noServer: true });
    this.http.on('upgrade', (request, socket, head) => {
      if (request.url === '/echo')
        echo.handleUpgrade(request, socket, head, (ws) => ws.on('message', (data) => ws.send(String(data))));
    });
  }

  static async start(): Promise<ApplicationServer> {
    const application = new ApplicationServer();
    application.http.listen(0, '127.0.0.1');
    await once(application.http, 'listening');
    return application;
  }

  /** `127.0.0.1:<port>` */
  get host(): string {
    return `127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.http.closeAllConnections();
    this.http.close();
    await once(this.http, 'close');
  }
}

/** What the echo at `url` sends back for "ping". */
export async function echoes(url: string): Promise<string> {
  const socket = new WebSocket(url);
  await once(socket, 'open');
  socket.send('ping');
  const [reply] = await once(socket, 'message');
  socket.close();
  return String(reply);
}
