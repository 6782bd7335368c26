import { readDueTimes } from './paced-tokens.js';

/** What CPP is compared with, beside its baselines: a Socket.IO server and an SSE endpoint. */
export const PEERS = ['socketio', 'sse'] as const;
export type PeerKind = (typeof PEERS)[number];
/** As the table names each peer. */
export const PEER_LABELS: Record<PeerKind, string> = { socketio: 'Socket.IO', sse: 'SSE' };

/** CPP, its raw `ws` baseline, and the peers. */
export type ServerKind = 'cpp' | 'raw' | PeerKind;

export interface LoadTarget {
  url: string;
  kind: ServerKind;
}

/** Receives every chunk as it came (bytes, or a Socket.IO client's text), with where its delta's text begins. */
export type ChunkListener = (frame: Buffer | string, deltaFrom: number) => void;

/** One streaming client of the load generator, whichever server it streams from. */
export interface LoadStream {
  /**
   * Starts an answer once `startAt` (`performance.now()`) has come and settles with its first chunk: returns when
   * the answer's first token was due, that is when the model started.
   */
  start(startAt: number): Promise<number>;
  close(): void;
}

export const CONNECT_LIMIT_MS = 20_000;
/** Every server's chunk carries CPP_STREAM_CHUNK's payload, encoded with the delta last. */
export const DELTA_KEY = '"delta":"';

/** Waits until `startAt` (`performance.now()`). */
export async function waitUntil(startAt: number): Promise<void> {
  const wait = startAt - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** The due time of a chunk's first token. */
export function firstDueTime(frame: Buffer | string, deltaFrom: number): number {
  let first = Number.NaN;
  readDueTimes(frame, deltaFrom, (due) => {
    if (Number.isNaN(first)) first = due;
  });
  return first;
}
