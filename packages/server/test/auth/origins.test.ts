import { once } from 'node:events';
import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** The HTTP status of an upgrade sent with `origin` (none: no Origin header); 101 when it is accepted. */
async function upgradeStatus(url: string, origin?: string): Promise<number> {
  const socket = new WebSocket(url, CPP_SUBPROTOCOL, origin === undefined ? {} : { origin });
  socket.on('error', () => undefined);
  const status = await Promise.race([
    once(socket, 'open').then(() => 101),
    once(socket, 'unexpected-response').then((args) => (args[1] as { statusCode: number }).statusCode),
  ]);
  socket.terminate();
  return status;
}

describe('the Origin allow-list', () => {
  it('refuses with HTTP 403 a page of an origin not listed, and lets listed origins and non-browsers in', async () => {
    const server = await fixture.start({ allowedOrigins: ['https://chat.example'] });
    expect(await upgradeStatus(server.url, 'https://evil.example')).toBe(403);
    expect(await upgradeStatus(server.url, 'https://chat.example')).toBe(101);
    expect(await upgradeStatus(server.url)).toBe(101);
  });

  it('takes the server\'s own origin for "self"', async () => {
    const server = await fixture.start({ allowedOrigins: ['self'] });
    expect(await upgradeStatus(server.url, `http://127.0.0.1:${server.port}`)).toBe(101);
    expect(await upgradeStatus(server.url, `http://127.0.0.1:${server.port + 1}`)).toBe(403);
    expect(await upgradeStatus(server.url, 'http://localhost:5173')).toBe(403);
  });

  it('lets every origin in by default', async () => {
    const server = await fixture.start();
    expect(await upgradeStatus(server.url, 'https://anywhere.example')).toBe(101);
  });
});
