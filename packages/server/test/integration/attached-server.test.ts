import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloseCode } from '@promethea/cpp-protocol';
import { CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';

let http: Server;

afterEach(async () => {
  http.closeAllConnections();
  http.close();
  await once(http, 'close');
});

/** An application's own server: a page at every path, and a WebSocket echo at /echo. */
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

async function echoes(url: string): Promise<string> {
  const socket = new WebSocket(url);
  await once(socket, 'open');
  socket.send('ping');
  const [reply] = await once(socket, 'message');
  socket.close();
  return String(reply);
}

describe('CPPServer attached to an existing http.Server', () => {
  it("serves CPP on its path and leaves the application's routes and upgrades alone, also after close()", async () => {
    const host = await applicationServer();
    const server = new CPPServer({ server: http });
    await server.ready;
    expect(server.url).toBe(`ws://localhost:${host.split(':')[1]}/v1/cpp/session`);

    const client = await RawClient.connect(`ws://${host}/v1/cpp/session`);
    expect((await openThread(client)).version).toBe(0);
    expect(await (await fetch(`http://${host}/anything`)).text()).toBe('the application');
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');

    await server.close();
    expect(await client.closed).toBe(CloseCode.GOING_AWAY);
    expect(http.listening).toBe(true);
    expect(await (await fetch(`http://${host}/`)).text()).toBe('the application');
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');
  });
});
