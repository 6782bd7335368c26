import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';
import { streamChunks } from './stream-chunks.js';

/** Bounds what a server may send without completing an event, so a broken upstream cannot fill memory. */
const MAX_EVENT_BYTES = 1024 * 1024;

/** The events of a `text/event-stream` body; a line that is not valid SSE ends the stream with a ParseError. */
export function serverSentEvents(body: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<EventSourceMessage> {
  const events = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onError: 'terminate', maxBufferSize: MAX_EVENT_BYTES }));
  return streamChunks(events);
}
