import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenarios } from '../src/index.js';
import { startFaultyServer } from './support/faulty-server.js';
import { startKitServer } from './support/kit-server.js';

/** Debian's Python, which has python3-websockets (`apt-get install python3-websockets`; .ci/run installs it). */
const PYTHON = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('../python/cpp_conformance.py', import.meta.url));

type Outcome = { code: number; stdout: string; stderr: string };

async function runPythonClient(...args: string[]): Promise<Outcome> {
  return promisify(execFile)(PYTHON, [CLIENT, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Outcome) => error,
  );
}

describe('the independent Python client (conformance/python)', () => {
  let kit: Awaited<ReturnType<typeof startKitServer>>;
  beforeAll(async () => {
    kit = await startKitServer();
  });
  afterAll(() => kit.stop());

  // Every scenario, not only the core ones: the non-core ones use what the core ones do not (expectAll in any order,
  // CPP_AUTH_CHALLENGE), and a second client that fails them would make the kit's verdict depend on the runner.
  it('passes every scenario against cpp-server (--all)', async () => {
    const outcome = await runPythonClient(kit.server.url, '--all');
    expect(outcome.stderr, 'is python3-websockets installed? apt-get install -y python3-websockets').not.toMatch(/ModuleNotFoundError/);
    expect(outcome.stdout.trim().split('\n').at(-1), outcome.stdout).toBe(`${loadScenarios().length} passed, 0 failed`);
    expect(outcome.code).toBe(0);
  }, 180_000);

  it('fails a server that breaks the protocol, exiting 1', async () => {
    const faulty = await startFaultyServer(() => undefined);
    try {
      const outcome = await runPythonClient(faulty.url, '--only', 'handshake-refuses-without', '--timeout', '2');
      expect(outcome.stdout).toContain('step 1: the server accepted an upgrade it must refuse with HTTP 400');
      expect(outcome.stdout.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
      expect(outcome.code).toBe(1);
    } finally {
      await faulty.close();
    }
  }, 60_000);
});
