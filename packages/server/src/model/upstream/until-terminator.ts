import { DRAIN_LIMIT_MS } from './stream-limits.js';

/** A vendor SDK's stream of events, which aborts its HTTP request when its iteration is stopped before the end. */
export interface SdkEventStream<Event> extends AsyncIterable<Event> {
  readonly controller: AbortController;
}

/**
 * The events of `stream` up to the one `isLast` recognises (the vendor's terminator). Stopping there would make the
 * SDK abort the request before the end of the response has arrived, which costs the connection; instead the rest is
 * read in the background, so that it goes back to fetch's pool, and cut if it does not end within DRAIN_LIMIT_MS.
 * Stopped before the terminator, the SDK aborts the request as usual.
 */
export async function* untilTerminator<Event>(
  stream: SdkEventStream<Event>,
  isLast: (event: Event) => boolean,
): AsyncGenerator<Event> {
  const events = stream[Symbol.asyncIterator]();
  let terminated = false;
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return;
      terminated = isLast(next.value);
      yield next.value;
      if (terminated) return;
    }
  } finally {
    if (terminated) readRest(events, stream.controller);
    else await events.return?.();
  }
}

function readRest<Event>(events: AsyncIterator<Event>, controller: AbortController): void {
  const timer = setTimeout(() => controller.abort(), DRAIN_LIMIT_MS);
  void (async () => {
    try {
      while (!(await events.next()).done);
    } catch {
      // The answer is complete: whatever follows its terminator no longer matters.
    } finally {
      clearTimeout(timer);
    }
  })();
}
