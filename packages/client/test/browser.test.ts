import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { CPPClient } from '../src/browser.js';
import { DID, useFakeSession } from './support/session.js';

/** A browser-like WebSocket: `ws` underneath, but (like a browser) it takes no headers. */
class BrowserLikeWebSocket extends WebSocket {
  static readonly opened: string[] = [];

  constructor(url: string, protocols: string | string[]) {
    super(url, protocols);
    BrowserLikeWebSocket.opened.push(url);
  }
}

describe('browser entry', () => {
  const session = useFakeSession();
  afterEach(() => vi.unstubAllGlobals());

  it('uses the global WebSocket and sends the DID as the `did` query parameter', async () => {
    vi.stubGlobal('WebSocket', BrowserLikeWebSocket);
    const client = new CPPClient({ endpoint: session.server.url, did: DID });
    const graph = await client.openThread();
    await client.close();

    expect(session.server.handshakes).toEqual([
      { did: DID, didFromHeader: false, url: `/v1/cpp/session?did=${encodeURIComponent(DID)}` },
    ]);
    expect(BrowserLikeWebSocket.opened.at(-1)).toBe(`${session.server.url}?did=${encodeURIComponent(DID)}`);
    expect(graph.version).toBe(0);
  });

  it('says so when the platform has no WebSocket', () => {
    vi.stubGlobal('WebSocket', undefined);
    expect(() => new CPPClient({ endpoint: session.server.url })).toThrow(/no global WebSocket/);
  });

  it('imports neither ws nor any node: module', () => {
    expect(nodeOnlyImports(resolve(dirname(fileURLToPath(import.meta.url)), '../src/browser.ts'))).toEqual([]);
  });
});

/** Walks the relative imports from a source file and lists every import of `ws` or a `node:` module. */
function nodeOnlyImports(entry: string, seen = new Set<string>()): string[] {
  if (seen.has(entry)) return [];
  seen.add(entry);
  const specifiers = [...readFileSync(entry, 'utf8').matchAll(/from '([^']+)'/g)].map((match) => match[1]!);
  return specifiers.flatMap((specifier) => {
    if (specifier === 'ws' || specifier.startsWith('node:')) return [`${entry}: ${specifier}`];
    if (!specifier.startsWith('.')) return [];
    return nodeOnlyImports(resolve(dirname(entry), specifier.replace(/\.js$/, '.ts')), seen);
  });
}
