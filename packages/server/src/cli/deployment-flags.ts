import { Option, type Command } from 'commander';
import type { RedisClusterTransport } from '../cluster/redis-cluster.js';
import { DEFAULT_REDIS_PREFIX } from '../cluster/redis-keys.js';
import type { ConversationStore } from '../store/conversation-store.js';
import { DEFAULT_SCHEMA } from '../store/postgres-schema-name.js';

/** Where a server keeps its conversations and whom it shares them with: the flags of docs/cluster.md. */
export interface DeploymentFlags {
  store: 'sqlite' | 'postgres';
  /** The SQLite file. */
  db: string;
  databaseUrl?: string;
  databaseSchema: string;
  redisUrl?: string;
  redisPrefix: string;
  /** The key attachment tickets are signed with: the same on every instance of a cluster (PROTOCOL.md §27.2). */
  attachmentSecret?: string;
}

export function addDeploymentFlags(program: Command): void {
  program
    .addOption(
      new Option('--store <kind>', 'where conversations live')
        .env('CPP_STORE')
        .default('sqlite')
        .choices(['sqlite', 'postgres']),
    )
    .addOption(
      new Option(
        '--database-url <url>',
        'PostgreSQL URL, for --store postgres (prefer the environment variable: flags show in ps)',
      ).env('DATABASE_URL'),
    )
    .addOption(
      new Option('--database-schema <name>', 'PostgreSQL schema of the tables')
        .env('CPP_DATABASE_SCHEMA')
        .default(DEFAULT_SCHEMA),
    )
    .addOption(
      new Option('--redis-url <url>', 'Redis URL: run as one instance of a cluster sharing the PostgreSQL store').env(
        'REDIS_URL',
      ),
    )
    .addOption(
      new Option('--redis-prefix <prefix>', 'put before every Redis key of the cluster')
        .env('CPP_REDIS_PREFIX')
        .default(DEFAULT_REDIS_PREFIX),
    )
    .addOption(
      new Option(
        '--attachment-secret <key>',
        'key (32+ characters) that signs attachment tickets; the same on every instance of a cluster',
      ).env('CPP_ATTACHMENT_SECRET'),
    );
}

/** Said at start by an instance of a cluster without a shared ticket key: its tickets work on it alone. */
export const UNSHARED_TICKETS_WARNING =
  'warning: no --attachment-secret: attachment tickets this instance issues are taken by it alone; give every instance the same key (CPP_ATTACHMENT_SECRET)';

export interface OpenedStore {
  store: ConversationStore;
  /** For the start-up banner. */
  description: string;
}

/**
 * Opens the store the flags name, migrating a PostgreSQL schema (each step told to `onProgress`). Each store's
 * driver is loaded here, only for the store asked for: a start (or `--help`) needs neither pg nor ioredis otherwise.
 */
export async function openStore(flags: DeploymentFlags, onProgress: (message: string) => void): Promise<OpenedStore> {
  if (flags.store === 'sqlite') {
    if (flags.redisUrl)
      throw new Error('cluster mode (--redis-url) needs a store all instances share: --store postgres');
    const { SqliteStore } = await import('../store/sqlite-store.js');
    return { store: SqliteStore.open(flags.db), description: `SQLite at ${flags.db}` };
  }
  const connectionString = requireDatabaseUrl(flags);
  const { PostgresStore } = await import('../store/postgres-store.js');
  const store = await PostgresStore.open({ connectionString, schema: flags.databaseSchema, onProgress });
  return { store, description: `PostgreSQL at ${withoutPassword(connectionString)}, schema ${flags.databaseSchema}` };
}

/** The Redis cluster the flags name, connected; undefined when this server runs alone. */
export async function openCluster(flags: DeploymentFlags): Promise<RedisClusterTransport | undefined> {
  if (!flags.redisUrl) return undefined;
  const { RedisClusterTransport } = await import('../cluster/redis-cluster.js');
  return RedisClusterTransport.connect({ url: flags.redisUrl, prefix: flags.redisPrefix });
}

export function requireDatabaseUrl(flags: DeploymentFlags): string {
  if (!flags.databaseUrl) throw new Error('PostgreSQL needs --database-url or DATABASE_URL');
  return flags.databaseUrl;
}

/** A URL fit for a log line or a banner: its password replaced. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}
