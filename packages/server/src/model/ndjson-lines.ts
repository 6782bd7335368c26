import { MAX_STREAM_FRAME_LENGTH } from './stream-limits.js';
import { malformedStream } from './upstream-failures.js';

/**
 * The non-empty lines of a newline-delimited JSON body (Ollama's native streaming format). A line that runs past
 * MAX_STREAM_FRAME_LENGTH without ending fails the stream as malformed, after the lines before it, without waiting
 * for the rest of it.
 */
export async function* ndjsonLines(body: AsyncIterable<string>, vendor: string): AsyncGenerator<string> {
  let pending = '';
  for await (const text of body) {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') yield line;
    if (pending.length > MAX_STREAM_FRAME_LENGTH) {
      throw malformedStream(vendor, `a line ran past ${MAX_STREAM_FRAME_LENGTH} characters without ending`);
    }
  }
  if (pending.trim() !== '') yield pending;
}
