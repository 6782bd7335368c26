import { parseArgs } from 'node:util';
import { runConformance } from './conformance-run.js';
import { formatReport } from './report.js';
import { loadScenarios, SCENARIO_DIRECTORY } from './scenario-files.js';

const USAGE = `usage: cpp-conformance <ws://host:port | endpoint URL> [options]

Drives a CPP v1.0.0 server through the conformance scenarios and prints a pass/fail table.
The server must run the demo model at its usual test speed, e.g. cpp-server --demo-delay-ms 20.

options:
  --scenarios <dir>     scenario folder (default: the kit's own)
  --only <text>         run only scenarios whose name contains text (repeatable)
  --core                run only the core scenarios
  --auth <mode>         how the server takes identities: claimed (default) or did-key; the scenarios
                        written for that mode run
  --concurrency <n>     scenarios run at once (default 4)
  --timeout-ms <ms>     how long a step waits for the server (default 10000)`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      scenarios: { type: 'string', default: SCENARIO_DIRECTORY },
      only: { type: 'string', multiple: true, default: [] },
      core: { type: 'boolean', default: false },
      auth: { type: 'string', default: 'claimed' },
      concurrency: { type: 'string', default: '4' },
      'timeout-ms': { type: 'string', default: '10000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [url] = positionals;
  if (values.help || url === undefined || positionals.length > 1) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.auth !== 'claimed' && values.auth !== 'did-key')
    throw new Error(`--auth takes claimed or did-key, not ${values.auth}`);
  const auth = values.auth;
  const scenarios = loadScenarios(values.scenarios).filter(
    (scenario) =>
      (scenario.auth ?? 'claimed') === auth &&
      (!values.core || scenario.core) &&
      (values.only.length === 0 || values.only.some((text) => scenario.name.includes(text))),
  );
  if (scenarios.length === 0) throw new Error('no scenario selected');
  console.log(`CPP conformance: ${scenarios.length} scenarios against ${url}\n`);
  const results = await runConformance({
    url,
    scenarios,
    auth,
    concurrency: positiveInteger(values.concurrency, '--concurrency'),
    timeoutMs: positiveInteger(values['timeout-ms'], '--timeout-ms'),
  });
  console.log(formatReport(results));
  return results.every((result) => result.passed) ? 0 : 1;
}

function positiveInteger(text: string, option: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${option} takes a whole number above 0, not ${text}`);
  return value;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(`cpp-conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
