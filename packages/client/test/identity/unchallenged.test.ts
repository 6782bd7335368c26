import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { CPP_SESSION_PATH, decodeClientFrame, encodeServerFrame, type ClientFrame } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';

const AUTH_TIMEOUT_MS = 200;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  // The tests fake the client's clock: what they opened closes on the real one.
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A `ws` server that accepts every upgrade, records what it receives, and answers only as `onConnection` does. */
async function silentServer(onConnection: (peer: WebSocket, endpoint: string) => void = () => undefined) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const endpoint = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${CPP_SESSION_PATH}`;
  const received: ClientFrame[] = [];
  server.on('connection', (peer) => {
    peer.on('message', (data) => {
      const decoded = decodeClientFrame(String(data));
      if (decoded.ok) received.push(decoded.frame);
    });
    onConnection(peer, endpoint);
  });
  cleanups.push(async () => {
    for (const peer of server.clients) peer.terminate();
    await new Promise((resolve) => server.close(resolve));
  });
  return { endpoint, received };
}

function connect(endpoint: string, reconnect = false): CPPClient {
  const client = new CPPClient({
    endpoint,
    identity: DidKeyIdentity.generate(),
    authTimeoutMs: AUTH_TIMEOUT_MS,
    reconnect,
  });
  cleanups.push(() => client.close());
  return client;
}

/** Fakes the client's clock (its sockets stay real): create the client after it, so that all its timers are fake. */
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
}

describe('a client with an identity, on a server that does not finish authenticating it', () => {
  it('gives up with 4408 when no challenge comes, and sends nothing', async () => {
    // The client answers a ping once its socket is open, which is when it starts waiting for the challenge.
    let upgraded!: (peer: WebSocket) => void;
    const opened = new Promise<WebSocket>((resolve) => (upgraded = resolve));
    const { endpoint, received } = await silentServer((peer) => {
      peer.once('pong', () => upgraded(peer));
      peer.ping();
    });
    fakeClock();
    const client = connect(endpoint);
    const listing = client.listThreads();
    const failure = client.ready().catch((error: unknown) => error);
    const peer = await opened;

    vi.advanceTimersByTime(AUTH_TIMEOUT_MS - 1);
    expect(client.status).toBe('connecting');
    vi.advanceTimersByTime(1);
    expect(client.status).toBe('closed');
    expect(await failure).toMatchObject({ code: 4408, reason: 'the server sent no identity challenge in time' });
    await expect(listing).rejects.toMatchObject({ code: 4408 });
    // Whatever it sent before its close has arrived once the close has.
    await once(peer, 'close');
    expect(received).toEqual([]);
  });

  it('gives up with 4408 when its proof is never answered', async () => {
    let proven!: () => void;
    const proof = new Promise<void>((resolve) => (proven = resolve));
    const { endpoint, received } = await silentServer((peer, audience) => {
      const issuedAt = Date.now();
      const nonce = 'q0Wc6mIuD2q8R3lWhB7o2kEwXk3r9yZ1n5Q4aT6uPzM';
      peer.send(encodeServerFrame('CPP_AUTH_CHALLENGE', { nonce, audience, issuedAt, expiresAt: issuedAt + 30_000 }));
      peer.once('message', () => proven());
    });
    fakeClock();
    const client = connect(endpoint);
    const failure = client.ready().catch((error: unknown) => error);
    await proof;

    vi.advanceTimersByTime(AUTH_TIMEOUT_MS - 1);
    expect(client.status).toBe('connecting');
    vi.advanceTimersByTime(1);
    expect(client.status).toBe('closed');
    expect(await failure).toMatchObject({ code: 4408, reason: 'the server did not accept the proof in time' });
    expect(received.map((frame) => frame.type)).toEqual(['CPP_AUTH_PROOF']);
  });
});
