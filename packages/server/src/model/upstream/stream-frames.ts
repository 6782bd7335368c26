import type { EventSourceMessage } from 'eventsource-parser';
import type { z } from 'zod';
import { malformedStream, type ProviderError } from '../provider-error.js';
import { MAX_STREAM_FRAME_LENGTH } from './stream-limits.js';

/**
 * The events of a `text/event-stream` body. A line that is not valid SSE, or an event past the size bound, ends the
 * stream with a malformed-stream ProviderError, after the events that came before it.
 */
export async function* serverSentEvents(
  body: AsyncIterable<string>,
  vendor: string,
): AsyncGenerator<EventSourceMessage> {
  const events: EventSourceMessage[] = [];
  let failure: ProviderError | undefined;
  // Loaded with the first stream, not at import: the root export names this provider, few servers use it.
  const { createParser } = await import('eventsource-parser');
  const parser = createParser({
    onEvent: (event) => {
      if (!failure) events.push(event);
    },
    onError: (error) => {
      failure ??= malformedStream(vendor, error.message, error);
    },
    maxBufferSize: MAX_STREAM_FRAME_LENGTH,
  });
  for await (const text of body) {
    parser.feed(text);
    for (const event of events) yield event;
    events.length = 0;
    if (failure) throw failure;
  }
}

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

/** Parses and checks one JSON payload of a stream (an SSE `data:` or an NDJSON line), or fails as malformed. */
export function parseStreamPayload<Schema extends z.ZodType>(
  text: string,
  schema: Schema,
  vendor: string,
  expected: string,
): z.output<Schema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw malformedStream(vendor, `a payload that is not JSON where ${expected} was expected`, error);
  }
  const payload = schema.safeParse(json);
  if (!payload.success) throw malformedStream(vendor, `a payload that is not ${expected}`, payload.error);
  return payload.data;
}
