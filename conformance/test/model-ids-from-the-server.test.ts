import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { formatReport, loadScenarios, runConformance } from '../src/index.js';
import { KIT_DEMO_DELAY_MS, KIT_TEST_TIMEOUT_MS, startKitServer } from './support/kit-server.js';

const folder = mkdtempSync(join(tmpdir(), 'cpp-kit-models-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

it('takes the reasoning model from CPP_MODELS: a server whose reasoning model is not demo-reasoning passes', async () => {
  const modelsFile = join(folder, 'models.json');
  writeFileSync(
    modelsFile,
    JSON.stringify({
      models: [
        { id: 'plain', provider: 'demo', demoDelayMs: KIT_DEMO_DELAY_MS },
        { id: 'thinker', provider: 'demo', model: 'demo-reasoning', demoDelayMs: KIT_DEMO_DELAY_MS },
      ],
    }),
  );
  const kit = await startKitServer(['--models-file', modelsFile]);
  try {
    const scenarios = loadScenarios().filter((scenario) =>
      ['reasoning-', 'regenerate-names-a-model'].some((text) => scenario.name.includes(text)),
    );
    expect(scenarios.length).toBeGreaterThanOrEqual(3);
    const results = await runConformance({
      url: kit.server.url,
      scenarios,
      concurrency: scenarios.length,
      timeoutMs: KIT_TEST_TIMEOUT_MS,
    });
    expect(
      results.filter((result) => !result.passed),
      formatReport(results),
    ).toEqual([]);
  } finally {
    await kit.stop();
  }
}, 120_000);
