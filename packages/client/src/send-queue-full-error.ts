/**
 * A request made while the client is not connected, when `maxQueuedFrames` frames already wait for the connection.
 * Nothing was queued or sent.
 */
export class SendQueueFullError extends Error {
  override readonly name = 'SendQueueFullError';

  constructor(readonly limit: number) {
    super(`${limit} frames already wait for the CPP connection; try again once it is open`);
  }
}
