import type { StreamChunkFrame } from '@promethea/cpp-protocol';
import type { Identity } from './identity.js';

/** A connection's view of a thread: where the thread's frames go. */
export interface Subscriber {
  /** The connection, when the subscriber is one: what the server logs of the operations it asks for name it. */
  readonly connectionId?: string | undefined;
  /** Who acts through the connection, when the subscriber is one: the answers it asks for count against it. */
  readonly identity?: Identity | undefined;
  /** `chunk` comes with a CPP_STREAM_CHUNK, so that a subscriber whose socket is behind can merge chunks. */
  send(text: string, chunk?: StreamChunkFrame['payload']): void;
}
