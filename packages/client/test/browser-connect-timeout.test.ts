import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Browser, Page } from 'playwright-core';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { sharedChromium } from '../../../test/support/chromium.js';
import type * as BrowserEntry from '../src/browser.js';
import { BlackHole } from './support/black-hole.js';
import { browserBundle } from './support/browser-bundle.js';

const CONNECT_TIMEOUT_MS = 200;

describe('the browser entry in Chromium, against a server that does not let it connect', () => {
  let browser: Browser;
  let script: string;
  beforeAll(async () => {
    [browser, script] = await Promise.all([sharedChromium(), browserBundle()]);
  });

  /** A page with the browser entry loaded, in a profile of its own that goes with the test. */
  async function pageWithEntry(): Promise<Page> {
    const page = await browser.newPage();
    onTestFinished(() => page.close());
    await page.addScriptTag({ content: script });
    return page;
  }

  it('gives up after connectTimeoutMs with the native WebSocket, closing it', async () => {
    const hole = await BlackHole.start();
    try {
      const page = await pageWithEntry();
      const failure = await page.evaluate(
        async ({ endpoint, connectTimeoutMs }) => {
          const { CPPClient } = (globalThis as unknown as { CPP: typeof BrowserEntry }).CPP;
          const client = new CPPClient({ endpoint, connectTimeoutMs });
          const error = await client.ready().then(
            () => undefined,
            (reason: unknown) => reason as InstanceType<typeof BrowserEntry.ConnectionClosedError>,
          );
          return { name: error?.name, code: error?.code, reason: error?.reason, status: client.status };
        },
        { endpoint: hole.url, connectTimeoutMs: CONNECT_TIMEOUT_MS },
      );
      expect(failure).toEqual({
        name: 'ConnectionClosedError',
        code: 1006,
        reason: 'the server did not answer the upgrade in time',
        status: 'closed',
      });
      await hole.until((it) => it.open === 0);
      expect(hole.accepted).toBe(1);
    } finally {
      await hole.close();
    }
  });

  it('says that a browser is not told why the server refused the upgrade', async () => {
    const refusing = createServer().on('upgrade', (_request, socket: Duplex) =>
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\nnot you'),
    );
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const page = await pageWithEntry();
      const failure = await page.evaluate(
        async (endpoint) => {
          const { CPPClient } = (globalThis as unknown as { CPP: typeof BrowserEntry }).CPP;
          const error = await new CPPClient({ endpoint }).ready().then(
            () => undefined,
            (reason: unknown) => reason as Error,
          );
          return { name: error?.name, message: error?.message };
        },
        `ws://127.0.0.1:${(refusing.address() as AddressInfo).port}`,
      );
      expect(failure.name).toBe('ConnectionClosedError');
      expect(failure.message).toMatch(
        /^CPP connection closed \(1006: the WebSocket failed before it opened, and browsers do not tell a page why: .*network panel/,
      );
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
