import { MAX_ERROR_BODY_BYTES, MAX_STREAM_FRAME_LENGTH } from './stream-limits.js';

const LINE_FEED = 0x0a;

/**
 * A fetch whose response bodies fail with LineTooLongError once more than MAX_STREAM_FRAME_LENGTH bytes arrive
 * without a line feed, and then cancel the upstream response. For the vendor SDKs, whose stream parsers keep a pending
 * line without limit: SSE and NDJSON frames are made of lines, so a valid stream never comes near the bound, while a
 * broken or hostile upstream can no longer grow the server's memory through them. Bytes pass through unchanged,
 * except that an error response's body ends after its first MAX_ERROR_BODY_BYTES (the SDKs read it whole).
 */
export function boundedFetch(base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => bounded(await base(input, init));
}

function bounded(response: Response): Response {
  if (response.body === null) return response;
  // An error in the transform errors its writable side, which makes pipeThrough cancel the upstream body.
  const lines = response.body.pipeThrough(lineLengthBound());
  const body = response.ok ? lines : lines.pipeThrough(byteLengthBound(MAX_ERROR_BODY_BYTES));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function lineLengthBound(): TransformStream<Uint8Array, Uint8Array> {
  let lineLength = 0;
  return new TransformStream({
    transform(chunk, controller) {
      for (let start = 0; ; ) {
        const lineFeed = chunk.indexOf(LINE_FEED, start);
        lineLength += (lineFeed === -1 ? chunk.length : lineFeed) - start;
        if (lineLength > MAX_STREAM_FRAME_LENGTH) throw new LineTooLongError();
        if (lineFeed === -1) break;
        lineLength = 0;
        start = lineFeed + 1;
      }
      controller.enqueue(chunk);
    },
  });
}

/** Passes the first `limit` bytes, then ends the body and cancels the rest of it upstream. */
function byteLengthBound(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let passed = 0;
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk.subarray(0, limit - passed));
      passed += chunk.length;
      if (passed >= limit) controller.terminate();
    },
  });
}

/**
 * A response body ran past MAX_STREAM_FRAME_LENGTH bytes without a line feed (see boundedFetch above). Providers
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
