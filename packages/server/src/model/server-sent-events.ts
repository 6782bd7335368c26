import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ProviderError } from './provider-error.js';
import { MAX_STREAM_FRAME_LENGTH } from './stream-limits.js';
import { malformedStream } from './upstream-failures.js';

/**
 * The events of a `text/event-stream` body. A line that is not valid SSE, or an event past the size bound, ends the
 * stream with a malformed-stream ProviderError, after the events that came before it.
 */
export async function* serverSentEvents(body: AsyncIterable<string>, vendor: string): AsyncGenerator<EventSourceMessage> {
  const events: EventSourceMessage[] = [];
  let failure: ProviderError | undefined;
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
