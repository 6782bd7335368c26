/** The thread was closed by `closeThread()` while a request on it was waiting: its answer can no longer arrive. */
export class ThreadClosedError extends Error {
  override readonly name = 'ThreadClosedError';

  constructor(readonly threadId: string) {
    super(`thread ${threadId} was closed while the request was waiting for its answer`);
  }
}
