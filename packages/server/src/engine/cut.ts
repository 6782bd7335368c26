import { safeCutLength } from '@promethea/cpp-protocol';
import type { HaltPoint } from './answer-stream.js';

/** Where a halted node's text ends, and what CPP_STREAM_HALTED reports about it. */
export interface Cut {
  content: string;
  finalContentLength: number;
  lastChunkReceived: string;
}

/**
 * The cut of a halted node: what was sent to clients, or less when the client says it had shown less
 * (`receivedContentLength`), never inside a surrogate pair. `lastChunkReceived` is the part before the cut of the
 * last chunk that began before it.
 */
export function cutAt(halt: HaltPoint, receivedContentLength: number | undefined): Cut {
  const limit = receivedContentLength === undefined ? halt.content.length : Math.min(receivedContentLength, halt.content.length);
  const length = safeCutLength(halt.content, limit);
  const chunkStart = lastStartBefore(halt.chunkStarts, length);
  return {
    content: halt.content.slice(0, length),
    finalContentLength: length,
    lastChunkReceived: length === 0 ? '' : halt.content.slice(chunkStart, length),
  };
}

/** The largest chunk start below `length`, by binary search over the ascending starts. */
function lastStartBefore(starts: readonly number[], length: number): number {
  let low = 0;
  let high = starts.length - 1;
  let found = 0;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (starts[middle]! < length) {
      found = starts[middle]!;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}
