import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { listThreads } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let http: Server;

afterEach(async () => {
  http.closeAllConnections();
  http.close();
  await once(http, 'close');
});

/** An application's server with an upgrade listener of its own, an echo at /echo, which ignores every other path. */
async function applicationServer(): Promise<string> {
  http = createServer((_request, response) => response.end('the application'));
  const echo = new WebSocketServer({ noServer: true });
  http.on('upgrade', (request, socket, head) => {
    if (request.url === '/echo') echo.handleUpgrade(request, socket, head, (ws) => ws.on('message', (data) => ws.send(String(data))));
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return `127.0.0.1:${(http.address() as AddressInfo).port}`;
}

/** The HTTP answer to a CPP upgrade, once the server has closed the connection: it is left to the server to close. */
function refusedUpgrade(url: string): Promise<Answer> {
  const socket = new WebSocket(url, CPP_SUBPROTOCOL);
  return new Promise((resolve, reject) => {
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.socket.once('close', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
  });
}

async function echoes(url: string): Promise<string> {
  const socket = new WebSocket(url);
  await once(socket, 'open');
  socket.send('ping');
  const [reply] = await once(socket, 'message');
  socket.close();
  return String(reply);
}

describe('CPP upgrades on an application server after CPPServer.close()', () => {
  it('are refused with 503 and a reason, the connection closed; the application keeps its upgrades', { timeout: 5000 }, async () => {
    const host = await applicationServer();
    const server = new CPPServer({ server: http });
    await server.ready;
    await server.close();

    const answer = await refusedUpgrade(`ws://${host}${CPP_SESSION_PATH}`);
    expect(answer).toMatchObject({ status: 503, body: 'this CPP server has shut down\n' });
    expect(answer.headers).toMatchObject({ connection: 'close', 'content-type': 'text/plain; charset=utf-8' });
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');
  });

  it('are served again by a CPPServer attached after it', { timeout: 5000 }, async () => {
    const host = await applicationServer();
    await new CPPServer({ server: http }).close();
    const next = new CPPServer({ server: http });
    await next.ready;
    try {
      const client = await RawClient.connect(`ws://${host}${CPP_SESSION_PATH}`);
      expect(await listThreads(client)).toEqual([]);
      expect(http.listeners('upgrade')).toHaveLength(2);
    } finally {
      await next.close();
    }
  });
});
