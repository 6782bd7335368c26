import { MAX_STREAM_FRAME_LENGTH } from './stream-limits.js';

/**
 * A response body ran past MAX_STREAM_FRAME_LENGTH bytes without a line feed (see bounded-fetch.ts). Providers
 * built on a vendor SDK turn it into their malformed-stream ProviderError.
 */
export class LineTooLongError extends Error {
  override readonly name = 'LineTooLongError';

  constructor() {
    super(`a line ran past ${MAX_STREAM_FRAME_LENGTH} bytes without ending`);
  }
}

/** The LineTooLongError that `error` is or was caused by: the AI SDK wraps what a response body throws. */
export function lineTooLong(error: unknown): LineTooLongError | undefined {
  if (error instanceof LineTooLongError) return error;
  return error instanceof Error && error.cause instanceof LineTooLongError ? error.cause : undefined;
}
