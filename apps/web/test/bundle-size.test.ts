import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { WebHarness } from './support/web-harness.js';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const RECORD = fileURLToPath(new URL('../../../test-output/web/performance.json', import.meta.url));
/** The budget for the JavaScript a first visit runs before anything else loads. */
const INITIAL_JS_BUDGET = 120 * 1024;

/** The scripts index.html loads, and every chunk they import statically (what runs before the page is usable). */
function initialScripts(): string[] {
  const page = readFileSync(`${DIST}index.html`, 'utf8');
  const pending = [
    ...page.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\.\/(assets\/[^"]+\.js)"/g),
  ].map((match) => match[1]!);
  const seen = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(DIST + file, 'utf8');
    // Static imports only (`import{x}from"./a.js"`, `import"./b.js"`); `import("./c.js")` loads on demand.
    for (const match of code.matchAll(/\bimport\s*(?:[\w$*{},\s]+?from\s*)?["']\.\/([^"']+\.js)["']/g))
      pending.push(`assets/${match[1]}`);
  }
  return [...seen];
}

describe('the web UI bundle', () => {
  it(`loads at most ${INITIAL_JS_BUDGET / 1024} KB of gzipped JavaScript up front; the Markdown renderer, highlighter and KaTeX come later`, async () => {
    const scripts = initialScripts();
    const sizes = Object.fromEntries(scripts.map((file) => [file, gzipSync(readFileSync(DIST + file)).length]));
    const total = Object.values(sizes).reduce((sum, size) => sum + size, 0);
    expect(scripts.some((file) => /highlight|math|katex|safe-markdown/.test(file))).toBe(false);
    expect(total).toBeLessThanOrEqual(INITIAL_JS_BUDGET);

    // First paint and time to interactive (the connection live and the message box focused), recorded for a person
    // to compare across changes; timings are not asserted, as this machine is shared.
    const harness = await WebHarness.start();
    const started = Date.now();
    const chat = await harness.openChat();
    const interactiveMs = Date.now() - started;
    const firstPaintMs = await chat.page.evaluate(
      () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
    );
    const navigation = await chat.page.evaluate(
      () =>
        (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)
          ?.domContentLoadedEventEnd,
    );
    await mkdir(fileURLToPath(new URL('.', `file://${RECORD}`)), { recursive: true });
    await writeFile(
      RECORD,
      `${JSON.stringify({ initialJsGzipBytes: total, scripts: sizes, firstContentfulPaintMs: firstPaintMs, domContentLoadedMs: navigation, interactiveMs }, null, 2)}\n`,
    );
    expect(firstPaintMs).toBeGreaterThan(0);
    expect(chat.problems).toEqual([]);
  }, 60_000);
});
