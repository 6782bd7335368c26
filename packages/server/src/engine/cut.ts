import { cutToolCalls, safeCutLength, type TextPart, type ToolCall } from '@promethea/cpp-protocol';
import type { HaltPoint, PartStream } from './answer-stream.js';

/** What the client had shown of each part of a halted node (CPP_PIVOT_INIT, CPP_STREAM_STOP, CPP_REGENERATE). */
export interface ReceivedLengths {
  content?: number | undefined;
  reasoning?: number | undefined;
}

/** Where a halted node's text and reasoning end, and what CPP_STREAM_HALTED reports about it. */
export interface Cut {
  content: string;
  /** Empty when the node has no reasoning. */
  reasoning: string;
  finalContentLength: number;
  /** The part the cut fell in: `reasoning` when none of the answer was kept and some reasoning was. */
  part: TextPart;
  /** Of the cut part's chunks. */
  lastChunkReceived: string;
  /** The calls made within the kept text, those still going on `interrupted` (docs/PROTOCOL.md §26.4). */
  toolCalls: ToolCall[];
}

/**
 * The cut of a halted node, each part by itself: what was sent to clients, or less when the client says it had
 * shown less, never inside a surrogate pair. `lastChunkReceived` is the part before the cut of the last chunk of the
 * cut part that began before it (docs/PROTOCOL.md §11.3, §11.5).
 */
export function cutAt(halt: HaltPoint, received: ReceivedLengths): Cut {
  const content = cutPart(halt.content, received.content);
  const reasoning = cutPart(halt.reasoning, received.reasoning);
  const part = content.length === 0 && reasoning.length > 0 ? 'reasoning' : 'content';
  const kept = part === 'content' ? content : reasoning;
  return {
    content,
    reasoning,
    finalContentLength: content.length,
    part,
    lastChunkReceived: lastChunkBefore(halt[part], kept.length),
    toolCalls: cutToolCalls(halt.toolCalls, content.length),
  };
}

function cutPart(stream: PartStream, received: number | undefined): string {
  const limit = received === undefined ? stream.text.length : Math.min(received, stream.text.length);
  return stream.text.slice(0, safeCutLength(stream.text, limit));
}

/**
 * The part before `length` of the last chunk that began before it; empty when none of this generation's chunks did
 * (the cut is 0, or falls in the text a continued node had before this generation).
 */
function lastChunkBefore(stream: PartStream, length: number): string {
  const start = lastStartBefore(stream.chunkStarts, length);
  return start === undefined ? '' : stream.text.slice(start, length);
}

/** The largest chunk start below `length`, by binary search over the ascending starts. */
function lastStartBefore(starts: readonly number[], length: number): number | undefined {
  let low = 0;
  let high = starts.length - 1;
  let found: number | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (starts[middle]! < length) {
      found = starts[middle]!;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}
