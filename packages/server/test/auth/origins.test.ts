import { once } from 'node:events';
import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** The HTTP status of an upgrade sent with `origin` (none: no Origin header) and `host`; 101 when it is accepted. */
async function upgradeStatus(url: string, origin?: string, host?: string): Promise<number> {
  const socket = new WebSocket(url, CPP_SUBPROTOCOL, {
    origin,
    ...(host === undefined ? {} : { headers: { host } }),
  });
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

describe('the Host allow-list', () => {
  it('refuses with HTTP 403 a Host not listed, the rebound name a page of another site connects through', async () => {
    const server = await fixture.start({ allowedHosts: ['chat.example'], allowedOrigins: ['self'] });
    const rebound = `evil.example:${server.port}`;
    expect(await upgradeStatus(server.url, `http://${rebound}`, rebound)).toBe(403);
    expect(await upgradeStatus(server.url, undefined, 'evil.example')).toBe(403);
    expect(await upgradeStatus(server.url, undefined, 'evil.example@127.0.0.1')).toBe(403);
    expect(await upgradeStatus(server.url, undefined, `Chat.Example:${server.port}`)).toBe(101);
    for (const host of [`127.0.0.1:${server.port}`, `[::1]:${server.port}`, 'localhost', 'app.localhost:5173']) {
      expect(await upgradeStatus(server.url, undefined, host)).toBe(101);
    }
  });

  it("takes the public URL's host, whatever the list", async () => {
    const server = await fixture.start({ auth: 'did-key', allowedHosts: [], publicUrl: 'https://cpp.example' });
    expect(await upgradeStatus(server.url, undefined, 'cpp.example')).toBe(101);
    expect(await upgradeStatus(server.url, undefined, 'evil.example')).toBe(403);
  });

  it('lets every Host in by default', async () => {
    const server = await fixture.start();
    expect(await upgradeStatus(server.url, undefined, 'anywhere.example')).toBe(101);
  });
});
