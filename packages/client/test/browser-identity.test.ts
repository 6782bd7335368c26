import { DidKeyIdentity } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedChromium } from '../../../test/support/chromium.js';
import { startServer } from '../../server/test/support/start-server.js';
import type * as BrowserEntry from '../src/browser.js';
import { browserBundle, servePage } from './support/browser-bundle.js';

type Entry = typeof BrowserEntry;

/** What a page knows of its identity: its DID, how IndexedDB keeps its key, and what localStorage still holds. */
interface KeptIdentity {
  did: string;
  key: { type: string; extractable: boolean; algorithm: string } | string;
  legacy: string | null;
}

describe('browserIdentity in Chromium', () => {
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let server: CPPServer;
  const proven: string[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    let script: string;
    [browser, script, server] = await Promise.all([
      sharedChromium(),
      browserBundle(),
      startServer({ model: new DemoProvider({ delayMs: 0, words: 3 }), auth: 'did-key' }),
    ]);
    page = await servePage(script);
    server.on('authenticated', ({ identity }) => proven.push(identity.did));
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await Promise.all([page?.close(), server?.close()]);
  });

  /** A new page in `context` (a browser profile: its own IndexedDB and localStorage), at the test's origin. */
  async function open(context?: BrowserContext): Promise<Page> {
    const profile = context ?? (await browser.newContext());
    if (!context) contexts.push(profile);
    const tab = await profile.newPage();
    await tab.goto(page.url);
    return tab;
  }

  /** Connects with `browserIdentity()` as the README shows, lists the threads, and reports how the identity is kept. */
  function connectAndInspect(tab: Page): Promise<KeptIdentity> {
    return tab.evaluate(async (endpoint) => {
      const { CPPClient, browserIdentity } = (globalThis as unknown as { CPP: Entry }).CPP;
      const identity = browserIdentity();
      const client = new CPPClient({ endpoint, identity, reconnect: false });
      await client.listThreads();
      await client.close();
      const record = await new Promise<{ privateKey: CryptoKey | Uint8Array }>((resolve, reject) => {
        const opening = indexedDB.open('cpp');
        opening.onerror = () => reject(opening.error);
        opening.onsuccess = () => {
          const reading = opening.result.transaction('identity').objectStore('identity').get('default');
          reading.onsuccess = () => resolve(reading.result);
        };
      });
      const { privateKey } = record;
      const key =
        privateKey instanceof CryptoKey
          ? { type: privateKey.type, extractable: privateKey.extractable, algorithm: privateKey.algorithm.name }
          : 'bytes';
      return { did: (await identity).did, key, legacy: localStorage.getItem('cpp.identity') };
    }, server.url);
  }

  it('keeps a non-extractable Ed25519 CryptoKey in IndexedDB, proves it, and is the same DID in every tab and visit', async () => {
    const first = await open();
    const kept = await connectAndInspect(first);
    expect(kept).toEqual({
      did: expect.stringMatching(/^did:key:z6Mk/),
      key: { type: 'private', extractable: false, algorithm: 'Ed25519' },
      legacy: null,
    });
    expect(proven.at(-1)).toBe(kept.did);

    const again = await open(first.context());
    await first.close();
    expect((await connectAndInspect(again)).did).toBe(kept.did);
    const elsewhere = await open();
    expect((await connectAndInspect(elsewhere)).did).not.toBe(kept.did);
  });

  it('cannot be read out by a script of the page', async () => {
    const tab = await open();
    const failure = await tab.evaluate(async () => {
      const identity = await (globalThis as unknown as { CPP: Entry }).CPP.browserIdentity();
      return identity.toStored().then(
        () => 'exported',
        (error: Error) => error.message,
      );
    });
    expect(failure).toMatch(/not extractable/);
  });

  it('moves an identity an earlier version kept in localStorage into IndexedDB, keeping its DID', async () => {
    const earlier = await (await DidKeyIdentity.generate({ extractable: true })).toStored();
    const tab = await open();
    await tab.evaluate((stored) => localStorage.setItem('cpp.identity', stored), JSON.stringify(earlier));
    expect(await connectAndInspect(tab)).toEqual({
      did: earlier.did,
      key: { type: 'private', extractable: false, algorithm: 'Ed25519' },
      legacy: null,
    });
    expect(proven.at(-1)).toBe(earlier.did);
  });

  it('gives tabs that make it at the same time one identity', async () => {
    const tab = await open();
    const dids = await tab.evaluate(async () => {
      const { browserIdentity } = (globalThis as unknown as { CPP: Entry }).CPP;
      const made = await Promise.all([browserIdentity(), browserIdentity(), browserIdentity()]);
      return made.map((identity) => identity.did);
    });
    expect(new Set(dids).size).toBe(1);
    expect((await connectAndInspect(tab)).did).toBe(dids[0]);
  });
});
