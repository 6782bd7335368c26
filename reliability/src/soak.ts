import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServerChild, type ServerMemory } from './server-child.js';
import { checkDatabase, checkMirrors, type SoakFindings } from './soak-checks.js';
import { SoakFigures } from './soak-figures.js';
import { soakOptions, type SoakOptions } from './soak-options.js';
import { SoakSession } from './soak-session.js';

/**
 * `npm run soak`: hundreds of sessions doing random prompts, pivots, anchors, stops and disconnects against one
 * cpp server (its own process, SQLite store, demo model) for a while; then checks that every tree is sound and every
 * client holds exactly the server's, that nothing unexpected failed, and that the server's memory came back near
 * where it started. Prints the figures; exits 1 when a check fails.
 */
const SETTLE_TIMEOUT_MS = 120_000;
const WARM_UP_SESSIONS = 20;

async function main(options: SoakOptions): Promise<boolean> {
  const folder = mkdtempSync(join(tmpdir(), 'cpp-soak-'));
  const databasePath = join(folder, 'soak.sqlite');
  const server = await ServerChild.start(databasePath, options.demoDelayMs, options.demoWords);
  try {
    console.log(
      `soak: ${options.sessions} sessions for ${options.durationMs / 1000} s against ${server.url} (demo model ${options.demoDelayMs} ms × ${options.demoWords} words)`,
    );
    await warmUp(server.url, options);
    const baseline = await server.memory();

    const figures = new SoakFigures();
    const sessions = await openSessions(server.url, figures, options);
    const peak = { heapUsed: 0, rss: 0 };
    const sampling = sample(server, peak);
    const started = Date.now();
    await Promise.all(sessions.map((session) => session.run(started + options.durationMs)));
    const ran = Date.now() - started;
    const settled = await Promise.race([
      Promise.all(sessions.map((session) => session.settle())).then(() => true),
      sleep(SETTLE_TIMEOUT_MS, false),
    ]);
    sampling.stop();
    const mirrors = await checkMirrors(server.url, sessions);

    await Promise.all(sessions.map((session) => session.client.close()));
    while ((await server.status()).connections > 0) await sleep(50);
    const after = await server.memory();
    const { errors: serverErrors } = await server.status();
    await server.close();
    const stored = await checkDatabase(databasePath);

    const heapBack = after.heapUsed <= baseline.heapUsed + options.heapToleranceBytes;
    report({ options, figures, ran, settled, mirrors, stored, serverErrors, baseline, peak, after, heapBack });
    const clean = [
      ...mirrors.violations,
      ...mirrors.mismatches,
      ...mirrors.streaming,
      ...stored.violations,
      ...stored.streaming,
    ];
    return settled && clean.length === 0 && figures.unexpected.length === 0 && serverErrors === 0 && heapBack;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A few sessions answer a prompt each, so that the baseline is taken with the server's code warm. */
async function warmUp(url: string, options: SoakOptions): Promise<void> {
  const figures = new SoakFigures();
  const sessions = await openSessions(url, figures, {
    ...options,
    sessions: Math.min(WARM_UP_SESSIONS, options.sessions),
    watchEvery: 0,
  });
  await Promise.all(
    sessions.map((session) => session.client.prompt({ threadId: session.threadId, userPrompt: 'Warm up' })),
  );
  await Promise.all(sessions.map((session) => session.client.close()));
}

async function openSessions(url: string, figures: SoakFigures, options: SoakOptions): Promise<SoakSession[]> {
  const sessions = Array.from({ length: options.sessions }, () => new SoakSession(url, figures, options));
  await Promise.all(sessions.map((session) => session.open()));
  if (options.watchEvery > 0) {
    await Promise.all(
      sessions.map((session, index) =>
        index > 0 && index % options.watchEvery === 0 ? session.open(sessions[index - 1]!.threadId) : undefined,
      ),
    );
  }
  return sessions;
}

/** Samples the server's memory (without collecting) once a second, keeping the highest. */
function sample(server: ServerChild, peak: ServerMemory): { stop(): void } {
  const timer = setInterval(() => {
    server.status().then(
      ({ heapUsed, rss }) => {
        peak.heapUsed = Math.max(peak.heapUsed, heapUsed);
        peak.rss = Math.max(peak.rss, rss);
      },
      () => undefined,
    );
  }, 1000);
  return { stop: () => clearInterval(timer) };
}

interface Report {
  options: SoakOptions;
  figures: SoakFigures;
  ran: number;
  settled: boolean;
  mirrors: SoakFindings;
  stored: SoakFindings;
  serverErrors: number;
  baseline: ServerMemory;
  peak: ServerMemory;
  after: ServerMemory;
  heapBack: boolean;
}

function report({
  options,
  figures,
  ran,
  settled,
  mirrors,
  stored,
  serverErrors,
  baseline,
  peak,
  after,
  heapBack,
}: Report): void {
  const { actions, answers } = figures;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const lines = [
    `ran ${(ran / 1000).toFixed(1)} s with ${options.sessions} sessions; every answer ended afterwards: ${settled ? 'yes' : 'NO'}`,
    `actions: ${Object.entries(actions)
      .map(([name, count]) => `${count} ${name}`)
      .join(', ')}`,
    `answers: ${answers.completed} completed, ${answers.interrupted} interrupted, ${answers.failed} failed; ${figures.chunks} chunks received; ${figures.reconnects} reconnects`,
    `trees: ${stored.threads} threads, ${stored.nodes} nodes in the database; invariant violations: ${mirrors.violations.length + stored.violations.length}; ` +
      `client copies differing from the server: ${mirrors.mismatches.length}; nodes left streaming: ${mirrors.streaming.length + stored.streaming.length}`,
    `unexpected errors: ${figures.unexpected.length} in clients, ${serverErrors} in the server`,
    `server heap: ${mb(baseline.heapUsed)} at baseline, ${mb(peak.heapUsed)} peak, ${mb(after.heapUsed)} after (back near baseline, within ${mb(options.heapToleranceBytes)}: ${heapBack ? 'yes' : 'NO'}); ` +
      `rss ${mb(baseline.rss)} → ${mb(peak.rss)} peak → ${mb(after.rss)}`,
  ];
  for (const line of lines) console.log(`soak: ${line}`);
  for (const problem of [
    ...figures.unexpected,
    ...mirrors.violations,
    ...mirrors.mismatches,
    ...mirrors.streaming,
    ...stored.violations,
    ...stored.streaming,
  ].slice(0, 20)) {
    console.log(`soak:   ${problem}`);
  }
}

const passed = await main(soakOptions(process.argv.slice(2), process.env));
console.log(passed ? 'soak: PASSED' : 'soak: FAILED');
process.exit(passed ? 0 : 1);
