import type { StreamChunkFrame } from '@promethea/cpp-protocol';

/** A connection's view of a thread: where the thread's frames go. */
export interface Subscriber {
  /** `chunk` comes with a CPP_STREAM_CHUNK, so that a subscriber whose socket is behind can merge chunks. */
  send(text: string, chunk?: StreamChunkFrame['payload']): void;
}
