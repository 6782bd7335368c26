// @promethea/cpp-server/sqlite: loads better-sqlite3, so the root import does not.
export { SqliteStore, type SqliteStoreOptions } from './store/sqlite-store.js';
