import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { loadScenarios, runConformance, type Scenario } from '../src/index.js';
import { startFaultyServer, type Answer } from './support/faulty-server.js';

const BIN = fileURLToPath(new URL('../bin/cpp-conformance.js', import.meta.url));
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function faultyServer(answer: Answer): Promise<string> {
  const server = await startFaultyServer(answer);
  close = server.close;
  return server.url;
}

function scenario(name: string): Scenario {
  const found = loadScenarios().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no scenario ${name}`);
  return found;
}

async function failureOf(url: string, name: string): Promise<string | undefined> {
  const [result] = await runConformance({ url, scenarios: [scenario(name)], timeoutMs: 2000 });
  return result?.failure && `step ${result.failure.step}: ${result.failure.message}`;
}

const emptySync = (threadId: unknown) => ({
  threadId: threadId ?? 'thread_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  rootNodeId: null,
  activeHeadMessageId: null,
  nodes: {},
  version: 0,
  title: '',
});

describe('the runner fails a server that breaks the protocol', () => {
  it('when it accepts an upgrade without the cpp-v1.0.0 subprotocol', async () => {
    const url = await faultyServer(() => undefined);
    expect(await failureOf(url, 'handshake-refuses-without-the-subprotocol')).toBe(
      'step 1: the server accepted an upgrade it must refuse with HTTP 400',
    );
  });

  it('when a frame has the wrong value', async () => {
    const url = await faultyServer((frame) => ({
      type: 'CPP_SYNC_GRAPH',
      payload: { ...emptySync(frame.payload.threadId), version: 1 },
    }));
    expect(await failureOf(url, 'threads-open-creates-and-opens')).toBe(
      'step 3: CPP_SYNC_GRAPH: payload.version: expected 0, got 1',
    );
  });

  it('when a frame does not match its published JSON Schema', async () => {
    const url = await faultyServer((frame) => ({
      type: 'CPP_SYNC_GRAPH',
      payload: { ...emptySync(frame.payload.threadId), rootNodeId: 'root' },
    }));
    expect(await failureOf(url, 'threads-open-creates-and-opens')).toMatch(
      /^step 3: CPP_SYNC_GRAPH does not match its published JSON Schema: \/payload\/rootNodeId/,
    );
  });

  it('when an expected answer never comes', async () => {
    const url = await faultyServer(() => undefined);
    expect(await failureOf(url, 'frames-unknown-types')).toBe('step 3: no frame within 2000 ms');
  });

  it('and cpp-conformance then exits 1 with the failure under its row', async () => {
    const url = await faultyServer(() => undefined);
    const run = promisify(execFile)(process.execPath, [
      BIN,
      url,
      '--only',
      'handshake-refuses-without',
      '--timeout-ms',
      '2000',
    ]);
    const failure = await run.then(
      () => undefined,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toContain('  FAIL    handshake-refuses-without-the-subprotocol');
    expect(failure?.stdout).toContain('step 1 (refuse): the server accepted an upgrade it must refuse with HTTP 400');
    expect(failure?.stdout.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
  });
});
