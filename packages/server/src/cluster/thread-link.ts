import type { StreamChunkFrame, TreeChange } from '@promethea/cpp-protocol';
import type { CommandReply } from './cluster-transport.js';
import type { ThreadCommand } from './thread-command.js';

/**
 * What a thread's engine knows of the other nodes: where it tells them what it sent its subscribers, the lock that
 * makes its generation the only one of the thread in the cluster, and the way to the node whose generation runs.
 * A node alone in its cluster has a link that never finds anybody there.
 */
export interface ThreadLink {
  /** A chunk this node's generation sent its subscribers (encoded as `text`). */
  chunk(chunk: StreamChunkFrame['payload'], text: string): void;
  /** Any other frame this node sent all of its subscribers. */
  frame(text: string): void;
  /** A change this node committed, as the CPP_GRAPH_PATCH `text`; `title` when the change set it. */
  change(change: TreeChange, text: string, title: string | undefined): void;

  /** Takes the thread's generation lock, before committing a change that starts a generation. False: another node holds it. */
  claimGeneration(): Promise<boolean>;
  /** Before a commit while this node holds the lock: rejects when another node has taken it (the node must stop writing). */
  confirmGeneration(): Promise<void>;
  /** No generation of this thread runs on this node any more. */
  releaseGeneration(): void;

  /**
   * Runs the command on the node whose generation streams in the thread and resolves with its answer; `undefined`
   * when no live node holds the generation (its node died, or it just ended).
   */
  forward(command: ThreadCommand): Promise<CommandReply | undefined>;
  /** Reloads the thread from the store (and the text streamed since its last batch), after this copy missed a change. */
  reload(): Promise<void>;
}
