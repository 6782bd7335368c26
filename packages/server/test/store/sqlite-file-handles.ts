import Database from 'better-sqlite3';
import { afterEach } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';

/**
 * The store opened on the file at `path()`, and plain connections beside it that look at the file as the store left
 * it; every handle made here (or given to `kept`) is closed after each test of the `describe` that calls this.
 */
export function sqliteFileHandles(path: () => string) {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const handle of opened.splice(0)) await handle.close();
  });
  const kept = <Handle extends { close(): unknown }>(handle: Handle): Handle => {
    opened.push(handle);
    return handle;
  };
  return { open: () => kept(SqliteStore.open(path())), inspect: () => kept(new Database(path())), kept };
}
