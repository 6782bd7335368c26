import { startCliServer, type CliServer } from '../../../packages/server/test/support/cli-server.js';
import { temporaryDatabase } from '../../../packages/server/test/support/temporary-database.js';

/** The demo model's pace the kit expects of the servers it tests (conformance/README.md). */
export const KIT_DEMO_DELAY_MS = 20;

/** `cpp-server` as the kit's README tells to start it: the demo model at the kit's pace, on a fresh SQLite file. */
export async function startKitServer(): Promise<{ server: CliServer; stop(): Promise<void> }> {
  const database = temporaryDatabase();
  const server = await startCliServer(['--db', database.path, '--demo-delay-ms', String(KIT_DEMO_DELAY_MS)]);
  return {
    server,
    async stop() {
      await server.kill('SIGTERM');
      database.remove();
    },
  };
}
