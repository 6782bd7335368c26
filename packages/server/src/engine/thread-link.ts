import type { ErrorCode, PresentIdentity, ServerFrame, StreamChunkFrame, TreeChange } from '@promethea/cpp-protocol';
import type { StoredThread } from '../store/conversation-store.js';
import type { ThreadFrame } from './thread-frame.js';
import type { Identity } from './identity.js';

/**
 * The engine's port to the other servers sharing its store: what a thread's engine tells them, the lock that makes
 * its generation the thread's only one, and the way to the server whose generation runs. The cluster implements it
 * (`ThreadReplica`); a server alone uses `SolitaryLink`, which has nobody to tell but still keeps two engines of one
 * thread in the process apart.
 */
export interface ThreadLink {
  /** A chunk this server's generation sent its subscribers (encoded as `text`). */
  chunk(chunk: StreamChunkFrame['payload'], text: string): void;
  /** Any other frame this server sent all of its subscribers. */
  frame(text: string): void;
  /** A change this server committed, as the CPP_GRAPH_PATCH `text`; `title` when the change set it. */
  change(change: TreeChange, text: string, title: string | undefined): void;
  /** Who has the thread open through this server; `ask`: the others are to answer with theirs. */
  presence(present: PresentIdentity[], ask: boolean): void;

  /** Takes the thread's generation lock, before committing a change that starts a generation. False: another holds it. */
  claimGeneration(): Promise<boolean>;
  /** Before a commit while this link holds the lock: rejects when another server has taken it (stop writing). */
  confirmGeneration(): Promise<void>;
  /** No generation of this thread runs here any more: the lock is free for others. */
  releaseGeneration(): void;

  /**
   * Runs the frame on the server whose generation streams in the thread and resolves with its answer; `undefined`
   * when no live server holds the generation (its server died, or it just ended).
   */
  forward(frame: ThreadFrame, identity: Identity): Promise<CommandReply | undefined>;
  /** Reloads the thread from the store (and the text streamed since its last batch), after this copy missed a change. */
  reload(): Promise<void>;

  /** From now on the engine hears what the link brings it. */
  attach(engine: LinkedEngine): void;
  /** The engine is unloaded: the link lets go of the lock and stops listening. */
  close(): Promise<void>;
}

/** What a link tells its thread's engine. */
export interface LinkedEngine {
  /** A frame another server sent; false when this copy missed something and must be reloaded. */
  applyRemote(frame: ServerFrame, text: string, title: string | undefined): boolean;
  /**
   * Takes the reloaded thread as its own and tells its subscribers; false, taking nothing, when the load is older
   * than the copy (read before a commit the copy already has): load again.
   */
  resynchronise(stored: StoredThread): boolean;
  /** Another server took the generation lock over: stop generating, commit nothing. */
  generationLost(): void;
  /** Who has the thread open through another server (`instance`); `ask`: tell it who has it open here. */
  applyPresence(instance: string, present: PresentIdentity[], ask: boolean): void;
}

/**
 * How the server that ran a forwarded frame answers: done, with the thread's version after it (an exact retry changes
 * nothing), or the CPP_ERROR to send.
 */
export type CommandReply =
  | { ok: true; retried: boolean; version: number }
  | { ok: false; code: ErrorCode; message: string };

/** Opens each thread with its link: the cluster's replicas, or solitary links. */
export interface ThreadLinks {
  /** Starts listening to the thread's link, then loads it; `stored` is undefined when the thread does not exist. */
  open(threadId: string): Promise<{ link: ThreadLink; stored: StoredThread | undefined }>;
}
