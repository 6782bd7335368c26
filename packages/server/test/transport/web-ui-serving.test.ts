import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../support/start-server.js';

const INDEX = '<!doctype html><title>ui</title><script type="module" src="./assets/app-3f2a.js"></script>';

/** A built UI as vite writes it: index.html, hashed assets, and a source map beside the script. */
function builtUi(): string {
  const directory = mkdtempSync(join(tmpdir(), 'cpp-web-ui-'));
  mkdirSync(join(directory, 'assets'));
  writeFileSync(join(directory, 'index.html'), INDEX);
  writeFileSync(join(directory, 'assets', 'app-3f2a.js'), 'console.log(1)');
  writeFileSync(join(directory, 'assets', 'app-3f2a.js.map'), '{"version":3}');
  writeFileSync(join(directory, '.env'), 'SECRET=1');
  return directory;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startUiServer() {
  const staticDir = builtUi();
  cleanups.push(() => rmSync(staticDir, { recursive: true, force: true }));
  const server = await startServer({ staticDir });
  cleanups.push(() => server.close());
  return server;
}

async function uiServer() {
  const server = await startUiServer();
  return (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);
}

describe('the web UI served by cpp-server', () => {
  it('serves the page with a strict Content-Security-Policy and the other security headers', async () => {
    const get = await uiServer();
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(INDEX);
    const policy = Object.fromEntries(
      page.headers
        .get('content-security-policy')!
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    const port = new URL(page.url).port;
    expect(policy).toEqual({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'", 'data:', 'blob:'],
      'font-src': ["'self'"],
      'connect-src': ["'self'", `ws://127.0.0.1:${port}`, `wss://127.0.0.1:${port}`],
      'manifest-src': ["'self'"],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    });
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-cache');
  });

  it('keeps a Host header that is not a plain host name out of the policy', async () => {
    const server = await startUiServer();
    const policy = await new Promise<string>((resolve, reject) => {
      request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/',
          headers: { host: "evil.example; script-src 'unsafe-inline'" },
        },
        (response) => {
          response.resume();
          resolve(String(response.headers['content-security-policy']));
        },
      )
        .on('error', reject)
        .end();
    });
    expect(policy).toContain("connect-src 'self';");
    expect(policy).not.toContain('unsafe-inline');
  });

  it('serves hashed assets for a year, falls back to the page only for app routes, and 404s unknown assets and source maps', async () => {
    const get = await uiServer();
    const script = await get('/assets/app-3f2a.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');

    // A route of the app is the page.
    const route = await get('/threads/some-thread');
    expect(route.status).toBe(200);
    expect(await route.text()).toBe(INDEX);

    for (const path of [
      '/assets/app-0000.js',
      '/assets/missing.css',
      '/favicon.ico',
      '/assets/app-3f2a.js.map',
      '/.env',
    ]) {
      const missing = await get(path);
      expect({ path, status: missing.status }).toEqual({ path, status: 404 });
      expect(await missing.text()).toBe('not found\n');
      expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
