/**
 * The thread was closed by `closeThread()`, or deleted, while a request on it was waiting: its answer can no longer
 * arrive.
 */
export class ThreadClosedError extends Error {
  override readonly name = 'ThreadClosedError';

  constructor(
    readonly threadId: string,
    readonly how: 'closed' | 'deleted' = 'closed',
  ) {
    super(`thread ${threadId} was ${how} while the request was waiting for its answer`);
  }
}
