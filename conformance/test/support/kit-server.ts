import { startCliServer, type CliServer } from '../../../packages/server/test/support/cli-server.js';
import { temporaryDatabase } from '../../../packages/server/test/support/temporary-database.js';

/** The demo model's pace the kit expects of the servers it tests (conformance/README.md). */
export const KIT_DEMO_DELAY_MS = 20;

/**
 * Scenarios run at once by the tests that run the whole kit: a scenario mostly waits on the demo model's answers
 * (about 3 s each), so 16 at once take the run from ~29 s to ~11 s without changing what a scenario checks.
 */
export const KIT_TEST_CONCURRENCY = 16;

/**
 * How long a step of those runs waits for the server: a wait for an event, never a check that nothing comes, so a
 * longer one only matters when the machine is slow. With 16 scenarios at once on a loaded machine the kit's default
 * (10 s) was once too short for a close after a frame over the hard limit.
 */
export const KIT_TEST_TIMEOUT_MS = 60_000;

/**
 * `cpp-server` as the kit's README tells to start it: the demo model at the kit's pace, on a fresh SQLite file;
 * `flags` (such as a models file) go after those.
 */
export async function startKitServer(
  flags: readonly string[] = [],
): Promise<{ server: CliServer; stop(): Promise<void> }> {
  const database = temporaryDatabase();
  const server = await startCliServer(['--db', database.path, '--demo-delay-ms', String(KIT_DEMO_DELAY_MS), ...flags]);
  return {
    server,
    async stop() {
      await server.kill('SIGTERM');
      database.remove();
    },
  };
}
