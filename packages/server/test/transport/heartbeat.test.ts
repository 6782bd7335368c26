import { once } from 'node:events';
import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { listThreads } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import type { CPPServer } from '@promethea/cpp-server';

/** Long enough for a pong to come back on a loaded machine; a slower one would have the client dropped. */
const HEARTBEAT_MS = 500;
/** A silent peer is dropped after two intervals however long they are: short ones keep the test quick. */
const QUICK_HEARTBEAT_MS = 20;
let server: CPPServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('heartbeats', () => {
  it('pings every connection and keeps one that answers', async () => {
    server = await startServer({ heartbeatIntervalMs: HEARTBEAT_MS });
    const client = await RawClient.connect(server.url);
    for (let ping = 1; ping <= 3; ping += 1) await once(client.socket, 'ping');
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    expect(await listThreads(client)).toEqual([]);
    await client.close();
  });

  it('drops a peer that stops answering pings, without a closing handshake', async () => {
    server = await startServer({ heartbeatIntervalMs: QUICK_HEARTBEAT_MS });
    const silent = new WebSocket(server.url, CPP_SUBPROTOCOL, { autoPong: false });
    await once(silent, 'open');
    expect(server.connectionCount).toBe(1);
    const sessionClosed = once(server, 'disconnect');
    const [code] = (await once(silent, 'close')) as [number];
    expect(code).toBe(1006);
    await sessionClosed;
    expect(server.connectionCount).toBe(0);
  });
});
