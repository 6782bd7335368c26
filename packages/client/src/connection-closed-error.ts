/** The session's socket closed (or never opened) while a request was waiting for its answer. */
export class ConnectionClosedError extends Error {
  override readonly name = 'ConnectionClosedError';

  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`CPP connection closed (${code}${reason ? `: ${reason}` : ''})`);
  }
}
