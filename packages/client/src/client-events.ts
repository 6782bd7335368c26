import type {
  PresenceFrame,
  StreamChunkFrame,
  StreamCompletedFrame,
  StreamHaltedFrame,
  ThreadGraph,
  ThreadSummary,
  ToolCallFrame,
} from '@promethea/cpp-protocol';
import type { ConnectionStatus } from './reconnect.js';
import type { CPPServerError } from './cpp-server-error.js';

export interface GraphEvent {
  threadId: string;
  /** The live mirror, already updated. */
  graph: ThreadGraph;
}

/** The events a CPPClient emits, with their listeners' signatures. */
export interface CPPClientEvents {
  /** `connecting` → `open`; after a loss `reconnecting` → `open` again (threads re-synced); finally `closed`. */
  status: (status: ConnectionStatus) => void;
  /** After any change of a mirror: a sync, a patch, a chunk or a halt. */
  graph: (event: GraphEvent) => void;
  /** A chunk that added text to a mirror. */
  chunk: (chunk: StreamChunkFrame['payload']) => void;
  halted: (halted: StreamHaltedFrame['payload']) => void;
  /** A tool call of a streaming answer began, changed state or reported progress (PROTOCOL.md §26.3). */
  toolCall: (toolCall: ToolCallFrame['payload']) => void;
  completed: (completed: StreamCompletedFrame['payload']) => void;
  /** A CPP_ERROR that answers no pending request (e.g. PROVIDER_ERROR of another client's prompt), or an invalid frame. */
  error: (error: CPPServerError) => void;
  /** A page of the thread list arrived (PROTOCOL.md §7.6). */
  threads: (threads: ThreadSummary[]) => void;
  /** A thread was created or changed, told to a connection subscribed to the list (PROTOCOL.md §7.11). */
  threadUpdated: (thread: ThreadSummary) => void;
  /**
   * A thread was deleted, by this client or another (PROTOCOL.md §25.2), or this identity was removed from a thread
   * shared with it (§29.4); its mirror is gone.
   */
  threadDeleted: (threadId: string) => void;
  /** Who has an open thread open changed (PROTOCOL.md §29.9): the whole set, as `presence(threadId)` returns it. */
  presence: (presence: PresenceFrame['payload']) => void;
}
