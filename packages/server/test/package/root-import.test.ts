import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What `import '@promethea/cpp-server'` loads, read in a fresh Node process from the built package (as an
// application resolves it): every module Node resolves is recorded by a resolve hook. Drivers, the Redis client,
// vendor SDKs and telemetry are subpath exports or load when used, so an application pays only for what it uses.
const HEAVY = ['better-sqlite3', 'pg', 'ioredis', 'pino', 'prom-client', '@anthropic-ai/sdk', 'ai', '@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto'];

const RECORDER = `
import { register } from 'node:module';
const hooks = 'data:text/javascript,' + encodeURIComponent(\`
  export async function resolve(specifier, context, next) {
    const result = await next(specifier, context);
    process.stdout.write('resolved ' + result.url + '\\\\n');
    return result;
  }\`);
register(hooks);
`;

/** The packages (by name) that a script (or a file and its arguments) run in a fresh process loads from node_modules. */
async function packagesLoadedBy(script: string | string[]): Promise<Set<string>> {
  const run = typeof script === 'string' ? ['--input-type=module', '-e', script] : script;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(RECORDER)}`, ...run], {
    cwd: new URL('../../../..', import.meta.url),
  });
  const names = [...stdout.matchAll(/^resolved .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((match) => match[1]!);
  return new Set(names);
}

describe("@promethea/cpp-server's root import", () => {
  it('loads no database driver, Redis client, vendor SDK, logger or metrics library', async () => {
    const loaded = await packagesLoadedBy(`await import('@promethea/cpp-server');`);
    expect(loaded).toContain('ws');
    expect(HEAVY.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('runs the Quick Start server with metrics off on nothing more', async () => {
    const loaded = await packagesLoadedBy(`
      const { CPPServer } = await import('@promethea/cpp-server');
      const server = new CPPServer({ port: 0, host: '127.0.0.1', metrics: false });
      await server.ready;
      await server.close();
    `);
    expect(HEAVY.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('loads a driver through its subpath export', async () => {
    const loaded = await packagesLoadedBy(`await import('@promethea/cpp-server/sqlite');`);
    expect(loaded).toContain('better-sqlite3');
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

