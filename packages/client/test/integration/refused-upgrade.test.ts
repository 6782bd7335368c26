import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CPPClient, ConnectionClosedError } from '@promethea/cpp-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';

describe('a connection that fails to open, in Node', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it("carries the HTTP status and body of the server's refusal", async () => {
    const server = await startServer({ auth: 'did-key' });
    closers.push(() => server.close());
    const client = new CPPClient({ endpoint: server.url, did: 'did:key:z6MkpTHR8VNs...' });

    const error = await client.ready().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).toMatchObject({
      code: 1006,
      reason:
        'the server refused the WebSocket upgrade with HTTP 401 Unauthorized: this server proves identities, and did:key:z6MkpTHR8VNs... is not an Ed25519 did:key',
    });
    expect((error as Error).message).toContain('is not an Ed25519 did:key');
    expect(client.status).toBe('closed');
  });

  it("reads no more than 1 KiB of a refusal's body, and none of its control characters", async () => {
    const refusing = await listen((_request, socket) => {
      // The client hangs up after the first KiB: the rest of the write fails.
      socket.on('error', () => undefined);
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nno\x1b[2J\x07 entry${'!'.repeat(1 << 20)}`);
    });
    closers.push(() => new Promise((resolve) => refusing.close(() => resolve())));
    const client = new CPPClient({
      endpoint: `ws://127.0.0.1:${(refusing.address() as AddressInfo).port}`,
      did: 'did:key:z6MkAnyone',
    });

    const error = (await client.ready().catch((caught: unknown) => caught)) as ConnectionClosedError;
    expect(error.reason).toMatch(
      /^the server refused the WebSocket upgrade with HTTP 403 Forbidden: no \[2J entry!+…$/,
    );
    expect(error.reason.length).toBeLessThan(1100);
  });

  it('carries the network error when nothing listens', async () => {
    const closed = await listen(() => undefined);
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new CPPClient({ endpoint: `ws://127.0.0.1:${port}`, did: 'did:key:z6MkAnyone' });

    const error = (await client.ready().catch((caught: unknown) => caught)) as ConnectionClosedError;
    expect(error.reason).toBe(`the server could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

function listen(upgrade: (request: unknown, socket: import('node:stream').Duplex) => void): Promise<Server> {
  const server = createServer();
  server.on('upgrade', upgrade);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
