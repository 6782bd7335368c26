import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_FRAME_TYPES, TEXT_PARTS } from '@promethea/cpp-protocol';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenarios } from '../src/index.js';
import { startFaultyServer } from './support/faulty-server.js';
import { KIT_TEST_CONCURRENCY, KIT_TEST_TIMEOUT_MS, startKitServer } from './support/kit-server.js';

/** Debian's Python, which has python3-websockets (`apt-get install python3-websockets`; .ci/run installs it). */
const PYTHON = '/usr/bin/python3';
const CLIENT = fileURLToPath(new URL('../python/cpp_conformance.py', import.meta.url));
const PYTHON_FOLDER = fileURLToPath(new URL('../python', import.meta.url));

type Outcome = { code: number; stdout: string; stderr: string };

async function runPythonClient(...args: string[]): Promise<Outcome> {
  return promisify(execFile)(PYTHON, [CLIENT, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Outcome) => error,
  );
}

/** What the Python client's protocol_schemas module reads, for a kit in `kit` (default: this one). */
async function pythonProtocolKnowledge(
  pythonFolder = PYTHON_FOLDER,
): Promise<{ schemas: string; serverFrameTypes: string[]; textParts: string[] }> {
  const script = [
    'import json, protocol_schemas as known',
    'print(json.dumps({"schemas": str(known.SCHEMAS), "serverFrameTypes": sorted(known.SERVER_FRAME_TYPES), "textParts": list(known.TEXT_PARTS)}))',
  ].join('\n');
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', script], { cwd: pythonFolder });
  return JSON.parse(stdout);
}

// The Python client keeps no list of its own: a frame type or text part added to the protocol reaches it through the
// published schemas, which published-schemas.test.ts holds equal to the protocol package's code.
describe("the Python client's knowledge of the protocol", () => {
  it("is the protocol package's: its server frame types and text parts, read from its published schemas", async () => {
    const known = await pythonProtocolKnowledge();
    expect(known.serverFrameTypes).toEqual([...SERVER_FRAME_TYPES].sort());
    expect(known.textParts).toEqual(TEXT_PARTS);
    expect(realpathSync(known.schemas)).toBe(
      fileURLToPath(new URL('../../packages/protocol/schemas', import.meta.url)),
    );
  });

  it('reads the schemas of the protocol package installed beside the kit, as Node resolves it', async () => {
    const project = mkdtempSync(join(tmpdir(), 'cpp-python-kit-'));
    try {
      const python = join(project, 'node_modules', '@promethea', 'cpp-conformance', 'python');
      cpSync(PYTHON_FOLDER, python, { recursive: true });
      const server = join(project, 'node_modules', '@promethea', 'cpp-protocol', 'schemas', 'server');
      mkdirSync(server, { recursive: true });
      cpSync(
        fileURLToPath(new URL('../../packages/protocol/schemas/server/CPP_STREAM_CHUNK.json', import.meta.url)),
        join(server, 'CPP_STREAM_CHUNK.json'),
      );
      writeFileSync(join(server, 'CPP_LATER_FRAME.json'), '{}');
      const known = await pythonProtocolKnowledge(python);
      expect(known.serverFrameTypes).toEqual(['CPP_LATER_FRAME', 'CPP_STREAM_CHUNK']);
      expect(known.schemas).toBe(join(realpathSync(project), 'node_modules', '@promethea', 'cpp-protocol', 'schemas'));
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});

describe('the independent Python client (conformance/python)', () => {
  let kit: Awaited<ReturnType<typeof startKitServer>>;
  beforeAll(async () => {
    kit = await startKitServer();
  });
  afterAll(() => kit.stop());

  // Every scenario, not only the core ones: the non-core ones use what the core ones do not (expectAll in any order,
  // CPP_AUTH_CHALLENGE), and a second client that fails them would make the kit's verdict depend on the runner.
  it('passes every scenario against cpp-server (--all)', async () => {
    const outcome = await runPythonClient(
      kit.server.url,
      '--all',
      '--concurrency',
      String(KIT_TEST_CONCURRENCY),
      '--timeout',
      String(KIT_TEST_TIMEOUT_MS / 1000),
    );
    expect(outcome.stderr, 'is python3-websockets installed? apt-get install -y python3-websockets').not.toMatch(
      /ModuleNotFoundError/,
    );
    expect(outcome.stdout.trim().split('\n').at(-1), outcome.stdout).toBe(
      `${claimedScenarios().length} passed, 0 failed`,
    );
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

/** The scenarios for a server taking claimed identities: the Python client runs those alone (no Ed25519 signing). */
function claimedScenarios() {
  return loadScenarios().filter((scenario) => (scenario.auth ?? 'claimed') === 'claimed');
}
