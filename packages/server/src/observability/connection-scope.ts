import { AsyncLocalStorage } from 'node:async_hooks';

/** The connection whose frame is being handled, carried through every await and timer that handling starts. */
export interface ConnectionScope {
  connectionId: string;
}

const scope = new AsyncLocalStorage<ConnectionScope>();

/**
 * Runs `work` on behalf of a connection. Whatever it starts (the thread's queue, a generation and its end, a
 * pivot) stays attributed to that connection, so that log lines deep in the engine name it without being told.
 */
export function inConnectionScope<Result>(connectionId: string, work: () => Result): Result {
  return scope.run({ connectionId }, work);
}

/** The connection on whose behalf the current code runs, if any. */
export function currentConnectionScope(): ConnectionScope | undefined {
  return scope.getStore();
}
