import type { ScenarioResult } from './scenario-run.js';

/** The pass/fail table, with the reason under each failure, ending with a "N passed, N failed" line. */
export function formatReport(results: readonly ScenarioResult[]): string {
  const nameWidth = Math.max(8, ...results.map((result) => result.scenario.name.length));
  const specWidth = Math.max(4, ...results.map((result) => result.scenario.spec.join(' ').length));
  const lines = [`  ${'result'.padEnd(6)}  ${'scenario'.padEnd(nameWidth)}  ${'spec'.padEnd(specWidth)}  time`];
  for (const result of results) {
    const { scenario, failure } = result;
    lines.push(
      `  ${(result.passed ? 'pass' : 'FAIL').padEnd(6)}  ${scenario.name.padEnd(nameWidth)}  ${scenario.spec.join(' ').padEnd(specWidth)}  ${formatDuration(result.durationMs)}`,
    );
    if (failure) lines.push(`          step ${failure.step} (${failure.description}): ${failure.message}`);
  }
  const failed = results.filter((result) => !result.passed).length;
  lines.push('', `${results.length - failed} passed, ${failed} failed`);
  return lines.join('\n');
}

function formatDuration(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds} ms` : `${(milliseconds / 1000).toFixed(1)} s`;
}
