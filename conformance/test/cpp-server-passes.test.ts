import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatReport, loadScenarios, runConformance } from '../src/index.js';
import { KIT_TEST_CONCURRENCY, KIT_TEST_TIMEOUT_MS, startKitServer } from './support/kit-server.js';

const BIN = fileURLToPath(new URL('../bin/cpp-conformance.js', import.meta.url));

describe('cpp-server against the conformance kit', () => {
  let kit: Awaited<ReturnType<typeof startKitServer>>;
  beforeAll(async () => {
    kit = await startKitServer();
  });
  afterAll(() => kit.stop());

  it('passes every scenario', async () => {
    const results = await runConformance({
      url: kit.server.url,
      scenarios: loadScenarios(),
      concurrency: KIT_TEST_CONCURRENCY,
      timeoutMs: KIT_TEST_TIMEOUT_MS,
    });
    expect(
      results.filter((result) => !result.passed),
      formatReport(results),
    ).toEqual([]);
  }, 180_000);

  it('is driven by the cpp-conformance command, given ws://host:port, printing the table and exiting 0', async () => {
    const origin = new URL(kit.server.url).origin;
    const { stdout } = await promisify(execFile)(process.execPath, [
      BIN,
      origin,
      '--only',
      'handshake',
      '--only',
      'frames-not-json',
    ]);
    expect(stdout).toMatch(/^ {2}pass {4}handshake-selects-the-subprotocol /m);
    expect(stdout).toMatch(/^ {2}pass {4}frames-not-json-objects /m);
    const selected = loadScenarios().filter((scenario) =>
      ['handshake', 'frames-not-json'].some((text) => scenario.name.includes(text)),
    ).length;
    expect(stdout.trim().split('\n').at(-1)).toBe(`${selected} passed, 0 failed`);
  }, 60_000);
});

describe('cpp-server proving identities against the conformance kit', () => {
  let kit: Awaited<ReturnType<typeof startKitServer>>;
  beforeAll(async () => {
    kit = await startKitServer(['--auth', 'did-key']);
  });
  afterAll(() => kit.stop());

  it('passes every scenario written for a server that proves identities, each identity proven by its key', async () => {
    const scenarios = loadScenarios().filter((scenario) => scenario.auth === 'did-key');
    expect(scenarios.length).toBeGreaterThan(0);
    const results = await runConformance({
      url: kit.server.url,
      scenarios,
      auth: 'did-key',
      concurrency: KIT_TEST_CONCURRENCY,
      timeoutMs: KIT_TEST_TIMEOUT_MS,
    });
    expect(results).toHaveLength(scenarios.length);
    expect(
      results.filter((result) => !result.passed),
      formatReport(results),
    ).toEqual([]);
  }, 120_000);
});
