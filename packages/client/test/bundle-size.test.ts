import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { describe, expect, it } from 'vitest';

/**
 * The README's promise for a page that imports CPPClient: at most 14 KB of JavaScript, minified and gzipped (12 KB
 * until the client carried tool calls: their mirror, approvals and the handlers of client tools; 13 KB until it
 * carried shared threads' members, invites, share links and presence, and prompts to several models: 13.7 KB).
 */
const BUDGET_BYTES = 14 * 1024;

/**
 * A page's bundle of the browser entry, as an application's bundler makes it: minified ESM, with code splitting.
 * The chunk the page loads first, and the chunks it imports at once; the Ed25519 fallback (@noble/curves) is a chunk
 * of its own, imported only by a browser without Ed25519 in WebCrypto.
 */
async function pageBundle(entry: string) {
  const bundle = await rolldown({
    input: fileURLToPath(new URL(`../src/${entry}`, import.meta.url)),
    platform: 'browser',
    // What a bundler resolves @promethea/cpp-protocol to in an installed app: its build, not its TypeScript.
    resolve: {
      alias: { '@promethea/cpp-protocol': fileURLToPath(new URL('../../protocol/dist/index.js', import.meta.url)) },
    },
  });
  const { output } = await bundle.generate({ format: 'esm', minify: true });
  await bundle.close();
  const chunks = output.filter((file) => file.type === 'chunk');
  const entryChunk = chunks.find((chunk) => chunk.isEntry)!;
  const loadedAtOnce = chunks.filter((chunk) => chunk === entryChunk || entryChunk.imports.includes(chunk.fileName));
  const deferred = chunks.filter((chunk) => !loadedAtOnce.includes(chunk));
  const modules = (files: typeof chunks) => files.flatMap((chunk) => Object.keys(chunk.modules));
  const gzipped = loadedAtOnce.reduce((total, chunk) => total + gzipSync(chunk.code, { level: 9 }).length, 0);
  return { gzipped, modules: modules(loadedAtOnce), deferredModules: modules(deferred) };
}

describe('the browser client in a page', () => {
  it(`is at most ${BUDGET_BYTES / 1024} KB gzip, minified, for CPPClient and browserIdentity`, async () => {
    const { gzipped } = await pageBundle('browser.ts');
    console.info(`browser entry: ${gzipped} bytes gzip`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('loads neither zod nor @noble/curves up front; @noble/curves only where WebCrypto lacks Ed25519', async () => {
    const { modules, deferredModules } = await pageBundle('browser.ts');
    expect(modules.filter((id) => /node_modules\/(zod|@noble)\//.test(id))).toEqual([]);
    expect(deferredModules.some((id) => id.includes('node_modules/@noble/curves/'))).toBe(true);
  });
});
