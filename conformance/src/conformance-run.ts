import { parseEndpoint } from './endpoint.js';
import { FrameValidator } from './frame-validator.js';
import type { Scenario, ServerAuth } from './scenario.js';
import { runScenario, type ScenarioResult } from './scenario-run.js';

export interface ConformanceOptions {
  /** `ws://host:port`, or the full URL of the session endpoint. */
  url: string;
  scenarios: Scenario[];
  /** How many scenarios run at once; each uses its own threads and identities. Default 4. */
  concurrency?: number;
  /** How long a step waits for the server. Default 10 000 ms. */
  timeoutMs?: number;
  /** How the server takes identities (default `claimed`): only the scenarios written for that mode run. */
  auth?: ServerAuth;
  /** Called as each scenario ends, for progress output. */
  onResult?(result: ScenarioResult): void;
}

/**
 * Runs the scenarios written for the server's mode (`auth`) against the server at `url` and returns their results
 * in the scenarios' order.
 */
export async function runConformance(options: ConformanceOptions): Promise<ScenarioResult[]> {
  const runOptions = {
    endpoint: parseEndpoint(options.url),
    validator: new FrameValidator(),
    timeoutMs: options.timeoutMs ?? 10_000,
  };
  const auth = options.auth ?? 'claimed';
  const scenarios = options.scenarios.filter((scenario) => (scenario.auth ?? 'claimed') === auth);
  const results: ScenarioResult[] = new Array(scenarios.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < scenarios.length; index = next++) {
      results[index] = await runScenario(scenarios[index]!, runOptions);
      options.onResult?.(results[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  return results;
}
