import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, untilServing } from '../support/local-port.js';

// The packages as a team adopting them gets them: packed by npm (from the build `npm test` makes first), installed
// from the tarballs into a new project outside the monorepo, then used there: linted (publint, are-the-types-wrong),
// the spec's Quick Start run, type-checked as a Node (nodenext) and as a browser consumer, and the installed
// `cpp-server` serving the web UI to a client that proves its did:key and importing a ChatGPT export.
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const PACKAGES = [
  '@promethea/cpp-protocol',
  '@promethea/cpp-client',
  '@promethea/cpp-server',
  '@promethea/cpp-react',
  '@promethea/cpp-ai-sdk',
  '@promethea/cpp-web',
  '@promethea/cpp-conformance',
];

const run = promisify(execFile);
const children: ChildProcess[] = [];
let project: string;
let tarballs: string[];

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'cpp-consumer-'));
  const packs = join(project, 'packs');
  await mkdir(packs);
  const packed = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', packs, ...PACKAGES.flatMap((name) => ['-w', name])],
    { cwd: root },
  );
  tarballs = (JSON.parse(packed.stdout) as { filename: string }[]).map((entry) => join(packs, entry.filename));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'cpp-consumer', private: true, type: 'module' }),
  );
  // From the local npm cache where it has them; the monorepo's own versions of what the consumers type-check with.
  const typesNode = JSON.parse(await readFile(join(root, 'node_modules/@types/node/package.json'), 'utf8')) as {
    version: string;
  };
  await run(
    'npm',
    [
      'install',
      '--ignore-scripts',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      ...tarballs,
      `@types/node@${typesNode.version}`,
      '@types/react@19',
    ],
    { cwd: project },
  );
  // better-sqlite3's install script downloads a prebuilt addon or compiles SQLite for minutes: the addon the
  // monorepo built for the same version is copied instead.
  const version = async (dir: string) =>
    (JSON.parse(await readFile(join(dir, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string })
      .version;
  expect(await version(project)).toBe(await version(root));
  await cp(join(root, 'node_modules/better-sqlite3/build'), join(project, 'node_modules/better-sqlite3/build'), {
    recursive: true,
  });
}, 600_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packages, installed from their tarballs into a new project', () => {
  it('pass publint and are-the-types-wrong', async () => {
    const lints = PACKAGES.map(async (name) => {
      const lint = await run(bin('publint'), ['--strict', '--pack', 'false', join(project, 'node_modules', name)]);
      expect(lint.stdout, name).not.toMatch(/error|warning|suggestion/i);
    });
    // ESM only, as every package here is: a CommonJS `require` of them is not a supported way in. attw exits
    // non-zero on any problem, which rejects.
    const typeChecks = tarballs.map((tarball) =>
      run(bin('attw'), ['--profile', 'esm-only', '--format', 'ascii', tarball]),
    );
    await Promise.all([...lints, ...typeChecks]);
  }, 300_000);

  it("run the spec's Quick Start: its server, and its client streaming an answer from it", async () => {
    const example = (name: string) => readFile(join(root, 'examples/quick-start', name), 'utf8');
    const port = await freePort();
    await writeFile(join(project, 'server.mjs'), (await example('server.mjs')).replace('port: 8080', `port: ${port}`));
    await writeFile(
      join(project, 'client.mjs'),
      (await example('client.mjs')).replace('wss://lvhllc.org', `ws://127.0.0.1:${port}`),
    );
    const server = start(process.execPath, ['server.mjs']);
    await untilServing(port, server);
    const client = start(process.execPath, ['client.mjs'], {
      until: (stdout) => (stdout.match(/Streaming new branch:/g)?.length ?? 0) >= 3,
    });
    await client.done;
    expect(client.stderr).toBe('');
    expect(server.stdout).toBe('');
  }, 60_000);

  it('type-check as a Node consumer (nodenext) and as a browser consumer (bundler, browser condition)', async () => {
    await writeFile(
      join(project, 'node-consumer.ts'),
      `import { CPPServer, MemoryStore } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { CPPClient, fileIdentity } from '@promethea/cpp-client';
import { CLIENT_FRAME_TYPES } from '@promethea/cpp-protocol';
import { useCPP } from '@promethea/cpp-react';
import { staticDir } from '@promethea/cpp-web';

const store: MemoryStore | SqliteStore = new MemoryStore();
const server = new CPPServer({ port: 8080, store, staticDir });
const client = new CPPClient({ endpoint: server.url, identity: await fileIdentity('identity.json') });
export const used = [client, useCPP, CLIENT_FRAME_TYPES.length];
`,
    );
    await writeFile(
      join(project, 'browser-consumer.ts'),
      `import { CPPClient, browserIdentity } from '@promethea/cpp-client';
// @ts-expect-error fileIdentity reads a file: the browser build does not have it
import { fileIdentity } from '@promethea/cpp-client';

import { CPPChatTransport } from '@promethea/cpp-ai-sdk';
import type { ChatTransport, UIMessage } from 'ai';

export const client = new CPPClient({ endpoint: 'wss://chat.example/v1/cpp/session', identity: browserIdentity() });
export const absent = fileIdentity;
export const transport: ChatTransport<UIMessage> = new CPPChatTransport({ client });
`,
    );
    const options = { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', lib: ['ES2022', 'DOM'] };
    await writeFile(
      join(project, 'tsconfig.node.json'),
      JSON.stringify({
        compilerOptions: { ...options, module: 'nodenext', moduleResolution: 'nodenext', types: ['node'] },
        files: ['node-consumer.ts'],
      }),
    );
    await writeFile(
      join(project, 'tsconfig.browser.json'),
      JSON.stringify({
        compilerOptions: {
          ...options,
          module: 'esnext',
          moduleResolution: 'bundler',
          customConditions: ['browser'],
          types: [],
        },
        files: ['browser-consumer.ts'],
      }),
    );
    for (const config of ['tsconfig.node.json', 'tsconfig.browser.json']) {
      const checked = await run(bin('tsc'), ['-p', config], { cwd: project }).catch(
        (error: { stdout: string }) => error,
      );
      expect(checked.stdout, config).toBe('');
    }
  }, 300_000);

  it('run the installed cpp-server, serving the web UI and answering a client that proves its did:key', async () => {
    const server = start(
      join(project, 'node_modules/.bin/cpp-server'),
      ['--port', '0', '--host', '127.0.0.1', '--db', join(project, 'data/cpp.sqlite'), '--demo-delay-ms', '1'],
      {
        until: (stdout) => /listening on (ws:\S+)/.test(stdout),
      },
    );
    await server.done;
    expect(server.stdout).not.toContain('not served');
    const endpoint = /listening on (ws:\S+)/.exec(server.stdout)![1]!;
    const page = await fetch(endpoint.replace(/^ws/, 'http').replace('/v1/cpp/session', '/'));
    expect(await page.text()).toContain('<div id="root"></div>');

    await writeFile(
      join(project, 'did-key-client.mjs'),
      `import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
const client = new CPPClient({ endpoint: process.argv[2], identity: DidKeyIdentity.generate() });
const answer = await client.prompt({ userPrompt: 'Hello' });
console.log(answer.status, answer.content.length > 0);
await client.close();
`,
    );
    const client = start(process.execPath, ['did-key-client.mjs', endpoint], {
      until: (stdout) => stdout.includes('completed true'),
    });
    await client.done;
  }, 60_000);

  it('import a ChatGPT export with the installed cpp-server, its file read on the thread of its own the bundle ships', async () => {
    const exported = join(root, 'packages/protocol/test/fixtures/chatgpt-conversations.json');
    const { stdout, stderr } = await run(
      join(project, 'node_modules/.bin/cpp-server'),
      ['import', exported, '--did', 'did:example:alice', '--db', join(project, 'data/imported.sqlite')],
      { cwd: project },
    );
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^imported 4 threads \(chatgpt\) for did:example:alice into SQLite at /);
  }, 60_000);
});

interface Started {
  process: ChildProcess;
  stdout: string;
  stderr: string;
  /** Settles once `until` holds (or at once without it), checked on each output; rejects when the process exits first. */
  done: Promise<void>;
}

function start(command: string, args: string[], { until }: { until?: (stdout: string) => boolean } = {}): Started {
  const child = spawn(command, args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const started: Started = { process: child, stdout: '', stderr: '', done: Promise.resolve() };
  started.done = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!until || until(started.stdout)) resolve();
    };
    child.stdout!.on('data', (data: Buffer) => {
      started.stdout += data.toString();
      check();
    });
    child.stderr!.on('data', (data: Buffer) => (started.stderr += data.toString()));
    child.on('exit', (code) =>
      reject(new Error(`${command} exited (${code}) first:\n${started.stdout}\n${started.stderr}`)),
    );
    check();
  });
  return started;
}
