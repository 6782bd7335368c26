import { Pool, TypeOverrides, types } from 'pg';
import { checkSchemaName, DEFAULT_SCHEMA } from './postgres-schema-name.js';

export interface PostgresConnectionOptions {
  /** A libpq URL, e.g. `postgres://user@host:5432/database`. */
  connectionString: string;
  /** Where the tables live; created by the first migration if missing. Default `public`. */
  schema?: string;
}

export { checkSchemaName, DEFAULT_SCHEMA };

/**
 * A pool whose every connection works in the schema. Parsers are set for this pool only (not pg's process-wide
 * defaults), so that other users of `pg` in the same process see no difference.
 */
export function createPool({ connectionString, schema = DEFAULT_SCHEMA }: PostgresConnectionOptions): Pool {
  const pool = new Pool({
    connectionString,
    options: `-c search_path=${checkSchemaName(schema)}`,
    types: columnTypes(),
  });
  // An idle connection that dies (a server restart, a network cut) is dropped by the pool and replaced on the next
  // query; without a listener the pool's 'error' event would crash the process.
  pool.on('error', () => {});
  return pool;
}

function columnTypes(): TypeOverrides {
  const overrides = new TypeOverrides();
  // Timestamps are bigint columns; pg hands bigints over as strings unless told otherwise.
  overrides.setTypeParser(types.builtins.INT8, parseSafeInteger);
  return overrides;
}

function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`${text} does not fit in a JavaScript number`);
  return value;
}
