/** Failures of the network between a server and a service it depends on, as Node reports them. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs of a server that is going down or not up yet: admin_shutdown, crash_shutdown,
 * cannot_connect_now. Class 08 (connection exceptions) is matched whole.
 */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03']);

/**
 * What node-postgres and ioredis say, without a code, when the connection under a command goes away or cannot be
 * made again.
 */
const LOST_CONNECTION =
  /^Connection terminated|connection error and is not queryable|^Connection is closed|max retries per request limit|Stream isn't writeable/;

/**
 * Whether an operation failed because the service it needs (the store's database, the cluster's Redis) could not
 * be reached (restarting, a network cut), which is worth trying again once it is back, rather than because of the
 * operation itself.
 */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isUnreachable);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_ERROR_CODES.has(code) || SHUTDOWN_STATES.has(code) || /^08/.test(code)))
    return true;
  return LOST_CONNECTION.test(error.message);
}
