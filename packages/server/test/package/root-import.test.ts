import { describe, expect, it } from 'vitest';
import { modulesLoadedBy, packageOf } from '../../../../bench/src/loaded-modules.js';

// What `import '@promethea/cpp-server'` loads, read in a fresh Node process from the built package (as an
// application resolves it): every module Node resolves is recorded by a resolve hook. Drivers, the Redis client,
// vendor SDKs and telemetry are subpath exports or load when used, so an application pays only for what it uses.
const HEAVY = [
  'better-sqlite3',
  'pg',
  'ioredis',
  'pino',
  'prom-client',
  '@anthropic-ai/sdk',
  'ai',
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-proto',
];
/**
 * Lighter, but each costs the import tens of milliseconds: the OpenTelemetry API loads once an SDK is registered (or
 * a tracer given), the SSE parser with the first OpenAI-compatible stream, the Markdown renderer with the first share
 * page read, and did:key proofs are checked without @noble/curves.
 */
const LOADED_WHEN_USED = ['@opentelemetry/api', 'eventsource-parser', 'markdown-it', '@noble/curves', '@noble/hashes'];

const REPOSITORY = new URL('../../../..', import.meta.url);

/** The packages (by name) that a script (or a file and its arguments) run in a fresh process loads from node_modules. */
async function packagesLoadedBy(script: string | string[]): Promise<Set<string>> {
  return new Set([...(await modulesLoadedBy(script, REPOSITORY))].flatMap((url) => packageOf(url) ?? []));
}

/**
 * In Node 20 the cost of an import is mostly the number of modules it loads (about 1 ms of CPU each here, see
 * `npm run bench:import`), far more than their size. Counted imported and required: zod 95 (64 of them its
 * locales), ws 14, sirv and its helpers 4, the server's bundle 4 files and the protocol's 1 (each package's Node
 * entry is a bundle of its build, scripts/bundle-package.mjs). A module more in the root import's graph must be
 * worth it; this budget, the count as it is, makes it a decision rather than an accident. 119 since `cpp-server
 * import` reads its file on a worker thread (73df9dd): the worker's entry shares the thread importer with the root,
 * so the bundle keeps it as a chunk of its own rather than load the whole server into the worker.
 */
const ROOT_IMPORT_MODULE_BUDGET = 119;

describe("@promethea/cpp-server's root import", () => {
  it('loads no database driver, Redis client, vendor SDK, logger, metrics library, tracing API or curve library', async () => {
    const loaded = await packagesLoadedBy(`await import('@promethea/cpp-server');`);
    expect(loaded).toContain('ws');
    expect([...HEAVY, ...LOADED_WHEN_USED].filter((name) => loaded.has(name))).toEqual([]);
  });

  it(`loads at most ${ROOT_IMPORT_MODULE_BUDGET} modules`, async () => {
    const modules = await modulesLoadedBy(`await import('@promethea/cpp-server');`, REPOSITORY);
    console.info(`import('@promethea/cpp-server') loads ${modules.size} modules`);
    expect(modules.size).toBeLessThanOrEqual(ROOT_IMPORT_MODULE_BUDGET);
  });

  it('runs the Quick Start server with metrics off, and answers a prompt, on nothing more', async () => {
    const loaded = await packagesLoadedBy(`
      const { CPPServer } = await import('@promethea/cpp-server');
      const { CPP_SUBPROTOCOL, newMessageId } = await import('@promethea/cpp-protocol');
      const { default: WebSocket } = await import('ws');
      const server = new CPPServer({ port: 0, host: '127.0.0.1', metrics: false });
      await server.ready;
      const socket = new WebSocket(server.url, [CPP_SUBPROTOCOL], { headers: { 'X-Client-Sovereign-DID': 'did:example:quick-start' } });
      const send = (type, payload) => socket.send(JSON.stringify({ type, timestamp: Date.now(), payload }));
      let prompted = false;
      await new Promise((resolve, reject) => {
        socket.on('open', () => send('CPP_THREAD_OPEN', {}));
        socket.on('message', (data) => {
          const frame = JSON.parse(String(data));
          if (frame.type === 'CPP_ERROR') reject(new Error(frame.payload.message));
          if (frame.type === 'CPP_SYNC_GRAPH' && !prompted) {
            prompted = true;
            send('CPP_PROMPT', { activeThreadId: frame.payload.threadId, userPrompt: 'Hello', newNodeId: newMessageId() });
          }
          if (frame.type === 'CPP_STREAM_COMPLETED') resolve();
        });
        socket.on('error', reject);
      });
      socket.close();
      await server.close();
    `);
    expect([...HEAVY, ...LOADED_WHEN_USED].filter((name) => loaded.has(name))).toEqual([]);
  });

  it('loads a driver through its subpath export', async () => {
    const loaded = await packagesLoadedBy(`await import('@promethea/cpp-server/sqlite');`);
    expect(loaded).toContain('better-sqlite3');
  });

  it("loads Anthropic's SDK through its subpath export", async () => {
    const loaded = await packagesLoadedBy(`await import('@promethea/cpp-server/anthropic');`);
    expect(loaded).toContain('@anthropic-ai/sdk');
  });
});

describe('the cpp-server CLI', () => {
  const cli = new URL('../../dist/cli/cpp-server.js', import.meta.url).pathname;

  it('loads neither pg nor ioredis (nor better-sqlite3) to show its help: each store loads its driver when opened', async () => {
    const loaded = await packagesLoadedBy([cli, '--help']);
    expect(loaded).toContain('commander');
    expect(['pg', 'ioredis', 'better-sqlite3'].filter((name) => loaded.has(name))).toEqual([]);
  });
});
