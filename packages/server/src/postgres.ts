// @promethea/cpp-server/postgres: loads pg, so the root import does not.
export { PostgresStore, type PostgresStoreOptions } from './store/postgres-store.js';
