import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CPPClient } from '@promethea/cpp-client';
import { CPPServer } from '@promethea/cpp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, untilServing } from './support/local-port.js';

// The spec's Quick Start code, run as written: both blocks are kept verbatim in examples/quick-start, and only the
// port and the endpoint are pointed at this machine. Runs the built packages (`npm test` builds first).
const root = fileURLToPath(new URL('..', import.meta.url));
const example = (name: string) => join(root, 'examples/quick-start', name);
/**
 * SHA-256 of the spec's two Quick Start code blocks (CPP-v1.0.0.md, its ```javascript blocks), taken from the spec
 * when they were copied: the copies are checked against these, so the check runs on any clone of the repository.
 */
const SPEC_BLOCK_SHA256 = {
  'server.mjs': '65b1cbc36a148f7fecf841ec1da7c34f476d5eead725951db0feb0ceff08e8ff',
  'client.mjs': '163dfafa0766dc61fc379143488ee8c7b70aa7278b4f53e3fbccf6a9b5d7b486',
};

const children: ChildProcess[] = [];
let workDir: string;
let port: number;
let serverOutput: Output;

beforeAll(async () => {
  workDir = await mkdtemp(join(root, 'examples/quick-start/.run-'));
  port = await freePort();
  const serverCode = (await readFile(example('server.mjs'), 'utf8')).replace('port: 8080', `port: ${port}`);
  await writeFile(join(workDir, 'server.mjs'), serverCode);
  serverOutput = run(join(workDir, 'server.mjs'));
  await untilServing(port, serverOutput);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(workDir, { recursive: true, force: true });
});

describe('the spec Quick Start', () => {
  it('is kept verbatim from the spec in examples/quick-start, byte for byte', async () => {
    for (const [name, digest] of Object.entries(SPEC_BLOCK_SHA256))
      expect(
        createHash('sha256')
          .update(await readFile(example(name)))
          .digest('hex'),
        name,
      ).toBe(digest);
  });

  it('client: client.pivot with nothing streaming starts a thread and streams the answer to onStream', async () => {
    const clientCode = (await readFile(example('client.mjs'), 'utf8')).replace(
      'wss://lvhllc.org',
      `ws://127.0.0.1:${port}`,
    );
    await writeFile(join(workDir, 'client.mjs'), clientCode);
    const output = run(join(workDir, 'client.mjs'));
    await output.until(() => (output.stdout.match(/Streaming new branch:/g)?.length ?? 0) >= 3);
    expect(output.stderr).toBe('');
  });

  it('README: the client snippet for the Quick Start server streams its answer, and exits once it closed', async () => {
    const [forQuickStartServer] = await readmeClientSnippets();
    const output = run(await pointedAt(forQuickStartServer!, port, 'readme-client.mjs'));
    expect(await output.exited).toBe(0);
    expect(output.stdout).toMatch(/(Streaming new branch:[^\n]*\n){3}/);
    expect(output.stderr).toBe('');
  });

  it('README: the client snippet for `npm start` proves a did:key, streams its answer, and exits once it closed', async () => {
    const provingServer = new CPPServer({ port: 0, host: '127.0.0.1', auth: 'did-key' });
    try {
      await provingServer.ready;
      const [, forNpmStart] = await readmeClientSnippets();
      const output = run(
        await pointedAt(forNpmStart!, Number(new URL(provingServer.url).port), 'readme-did-key-client.mjs'),
      );
      expect(await output.exited).toBe(0);
      expect(output.stdout).toMatch(/(Streaming new branch:[^\n]*\n){3}/);
      expect(output.stderr).toBe('');
    } finally {
      await provingServer.close();
    }
  });

  it("server: the 'pivot' listener halts the running answer and spawns the sibling branch", async () => {
    const client = new CPPClient({ endpoint: `ws://127.0.0.1:${port}/v1/cpp/session`, did: 'did:key:z6MkQuickStart' });
    const threadId = (await client.openThread()).threadId;
    const first = client.prompt({ userPrompt: 'Compare Clojure and Rust.' });
    await new Promise<void>((resolve) => client.on('chunk', () => resolve()));
    const pivoted = await client.pivot({ userPrompt: 'Let us pivot to Rust implementation instead.' });

    expect((await first).status).toBe('interrupted');
    expect(pivoted.status).toBe('completed');
    expect(serverOutput.stdout).toContain(`Halting active stream for thread: ${threadId}`);
    expect(serverOutput.stdout).toContain('Splicing thread tree and spawning sibling...');
    const graph = client.graph(threadId)!;
    const interrupted = graph.nodes[(await first).assistantNodeId]!;
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.childrenIds).toContain(pivoted.userNodeId);
    await client.close();
  });
});

describe('the README agent', () => {
  it('runs as written: the client pivots while the server’s count_to runs, which the answer keeps interrupted', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const [serverCode] = [...readme.matchAll(/```js\n([\s\S]*?)```/g)]
      .map((match) => match[1]!)
      .filter((code) => code.includes('new CPPServer') && code.includes('tools:'));
    const agentPort = await freePort();
    const serverFile = join(workDir, 'readme-agent-server.mjs');
    await writeFile(serverFile, serverCode!.replace('port: 8080', `port: ${agentPort}`));
    const agentServer = run(serverFile);
    await untilServing(agentPort, agentServer);
    const [, , agentClient] = await readmeClientSnippets();
    const output = run(await pointedAt(agentClient!, agentPort, 'readme-agent-client.mjs'));
    expect(await output.exited).toBe(0);
    expect(output.stdout).toContain('tool clock: output-available');
    expect(output.stdout).toContain('tool count_to: input-available');
    expect(output.stdout).toContain('kept: clock output-available, count_to interrupted');
    expect(output.stderr).toBe('');
  });
});

/** The README's client snippets (its `js` blocks that make a CPPClient), in order. */
async function readmeClientSnippets(): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  return [...readme.matchAll(/```js\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .filter((code) => code.includes('new CPPClient'));
}

/** A snippet written to the work folder, its endpoint (localhost:8080, as the README says) pointed at `target`. */
async function pointedAt(code: string, target: number, name: string): Promise<string> {
  expect(code).toContain("'ws://localhost:8080/v1/cpp/session'");
  const file = join(workDir, name);
  await writeFile(file, code.replace('ws://localhost:8080', `ws://127.0.0.1:${target}`));
  return file;
}

interface Output {
  process: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  until(condition: () => boolean | Promise<boolean>): Promise<void>;
}

function run(file: string): Output {
  const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const output: Output = {
    process: child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    async until(condition) {
      while (!(await condition())) {
        if (child.exitCode !== null) throw new Error(`${file} exited (${child.exitCode}): ${output.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  child.stdout.on('data', (data: Buffer) => (output.stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output.stderr += data.toString()));
  return output;
}
