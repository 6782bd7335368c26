import type { PresentIdentity, TextPart } from '@promethea/cpp-protocol';
import type { CommandReply } from '../engine/thread-link.js';
import type { Identity } from '../engine/identity.js';

/**
 * What one instance tells the other instances holding a thread: a frame exactly as its own subscribers received it, or
 * who has the thread open through it.
 */
export type ThreadMessage = FrameMessage | PresenceMessage;

export interface FrameMessage {
  /** An encoded server frame; a structural change travels as the CPP_GRAPH_PATCH of its changed nodes. */
  frame: string;
  /** The thread's title, on the change that set it (patches do not carry titles, syncs do). */
  title?: string;
}

/** The identities that have the thread open through one instance (docs/PROTOCOL.md §29.9). */
export interface PresenceMessage {
  presence: {
    instance: string;
    present: PresentIdentity[];
    /** The instance has just begun to hold the thread: the others tell it theirs. */
    ask: boolean;
  };
}

/** A client frame about a thread whose generation runs on another instance, handed to that instance to run. */
export interface ForwardedCommand {
  threadId: string;
  /**
   * The client frame, encoded: the instance that runs it decodes and validates it again, as it would its own client's.
   */
  frame: string;
  /** Who sent the frame, as the receiving instance identified them: the owner's hooks and 'pivot' listeners are told. */
  identity?: Identity;
}

export type { CommandReply } from '../engine/thread-link.js';

/** What a chunk adds to the text of its node's part. */
export interface StreamedDelta {
  nodeId: string;
  part: TextPart;
  delta: string;
}

/** The thread's generation lock as the cluster sees it now. */
export type LockLease =
  /** Held, for `expiresInMs` more unless its holder renews it (a live holder does, every third of its lifetime). */
  | { holder: string; expiresInMs: number }
  /**
   * Taken by `holder` and expired instead of being released: that instance died (or stalled past the lock's lifetime).
   */
  | { holder: string; expired: true };

/** A command on its way to the instance holding its thread's lock. */
export interface SentCommand {
  holder: string;
  reply: Promise<CommandReply | undefined>;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

/** What an instance does with what the cluster brings it. */
export interface ClusterHandlers {
  /** A command another instance forwarded to this one. */
  command(command: ForwardedCommand): Promise<CommandReply>;
  /** A failure in the background (a lost connection, a message that could not be read). */
  error(error: unknown): void;
  /** The instance was cut off from the others for a while: messages of its threads may have been lost. */
  reconnected(): void;
}

/**
 * How the server processes sharing one store coordinate. The server talks only to this interface; one adapter
 * keeps everything in memory (one process, the default), the other uses Redis (several processes). Both pass the
 * contract suite in test/cluster.
 */
export interface ClusterTransport {
  /** This instance's id, unique in the cluster. */
  readonly instanceId: string;
  /** No other instance shares the store: crash recovery at start may interrupt every streaming node. */
  readonly solitary: boolean;

  /** Starts delivering forwarded commands to `handlers`. Called once, before anything else. */
  start(handlers: ClusterHandlers): Promise<void>;

  /**
   * Sends `message` to every other instance subscribed to the thread, in the order this instance published; an instance
   * never receives its own messages.
   */
  publish(threadId: string, message: ThreadMessage): void;
  /** Resolves once subscribed: every message published after that reaches `listener`. */
  subscribe(threadId: string, listener: (message: ThreadMessage) => void): Promise<Subscription>;

  /**
   * A chunk of this instance's generation: appends `delta` to the text of the node's part (answer or reasoning)
   * streamed so far (see `readText`), then publishes `message` as `publish` does, both in one step and only while
   * this instance holds the thread's lock with `token`. Resolves false, having done neither, once another instance
   * has taken the lock since (fencing: an instance paused past its lock's lifetime, whose answer another instance
   * has recovered meanwhile, must not add a word to it when it resumes).
   */
  streamChunk(threadId: string, token: number, chunk: StreamedDelta, message: FrameMessage): Promise<boolean>;
  /**
   * The text of one part appended for a node so far (`''` when none): what an instance loading the thread adds to the
   * store's batch.
   */
  readText(nodeId: string, part: TextPart): Promise<string>;
  /** The node stopped streaming: the text of both its parts may be forgotten soon. */
  endText(nodeId: string): void;

  /**
   * Takes the thread's generation lock for `ttlMs` unless another instance holds it. Resolves with the fencing token,
   * greater than every earlier token of that thread, or `undefined` when the lock is held.
   */
  acquireLock(threadId: string, ttlMs: number): Promise<number | undefined>;
  /**
   * Extends the lock held with `token`; takes it back if it expired and nobody took it since. `false`: another
   * instance has taken it since, and this instance must stop writing.
   */
  renewLock(threadId: string, token: number, ttlMs: number): Promise<boolean>;
  /** Lets go of the lock if it is still held with `token`. */
  releaseLock(threadId: string, token: number): Promise<void>;
  /** The instance holding the thread's lock, if any. */
  lockHolder(threadId: string): Promise<string | undefined>;
  /**
   * The thread's lock, or `undefined` when nobody holds it and its last holder released it (or nobody ever took it).
   */
  lockLease(threadId: string): Promise<LockLease | undefined>;
  /** Threads whose generation lock was taken and then expired instead of being released: their instance died. */
  orphanedGenerations(): Promise<string[]>;

  /**
   * Runs a command on the instance that holds its thread's generation lock: the holder is read and the command queued
   * for it in one step, so that a forwarded pivot pays one trip to the cluster before it leaves, not two.
   * `undefined` when nobody holds the lock, or this instance does (nothing was sent). Otherwise the holder, and its
   * reply: `undefined` when it did not answer within `timeoutMs`, or at once when `signal` aborts (the sender stops
   * waiting: a reply that comes later is dropped).
   */
  sendToLockHolder(
    command: ForwardedCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<SentCommand | undefined>;

  /** Rejects when the cluster cannot be reached (readiness). */
  check(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
}
