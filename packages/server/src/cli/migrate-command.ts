import { Command } from 'commander';
import { requireDatabaseUrl, withoutPassword, type DeploymentFlags } from './deployment-flags.js';

/**
 * `cpp-server migrate`: brings the PostgreSQL schema up to date and exits, one line per step, so that a deployment
 * can migrate before it starts (or rolls) its nodes. Servers also migrate at start; both are safe at once.
 */
export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply the PostgreSQL schema migrations (--database-url, --database-schema) and exit')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<DeploymentFlags>();
      const connectionString = requireDatabaseUrl(flags);
      console.log(`migrating PostgreSQL at ${withoutPassword(connectionString)}, schema ${flags.databaseSchema}`);
      // pg is loaded by the one command that needs it, not by every start of the CLI.
      const [{ createPool }, { migrate }] = await Promise.all([
        import('../store/postgres-connection.js'),
        import('../store/postgres-migrations.js'),
      ]);
      const pool = createPool({ connectionString, schema: flags.databaseSchema });
      try {
        const { version, applied } = await migrate(pool, {
          schema: flags.databaseSchema,
          onProgress: (message) => console.log(message),
        });
        console.log(`done: ${applied} migration${applied === 1 ? '' : 's'} applied, schema at version ${version}`);
      } finally {
        await pool.end();
      }
    });
}
