import type { HaltReason, ThreadGraph, TreeChange } from '@promethea/cpp-protocol';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ConversationStore, ThreadRecord } from '../store/conversation-store.js';
import type { AnswerStream } from './answer-stream.js';
import type { Cut, ReceivedLengths } from './cut.js';
import type { EngineObserver } from './engine-observer.js';
import type { OperationContext } from './operation-context.js';
import type { PivotContext } from './pivot-context.js';
import type { Subscriber } from './subscriber.js';
import type { Titling } from './thread-committer.js';
import type { ThreadGeneration } from './thread-generation.js';

/**
 * The limits on how a thread grows, checked in the thread's turn: a frame's refusal never overtakes the answers to
 * the frames before it. RATE_LIMITED when past them.
 */
export interface ThreadLimits {
  /** CPP_PROMPT and CPP_PIVOT_INIT: the prompt's length, and room for the prompt and two nodes. */
  checkPrompt(graph: ThreadGraph, userPrompt: string, newNodeId: string): void;
  /** Room for `count` more nodes, the first of them `newNodeId` (CPP_REGENERATE adds one). */
  checkRoom(graph: ThreadGraph, newNodeId: string, count: number): void;
  /** CPP_CONTINUE: room for more text in the thread, unless `nodeId` streams (a retry). */
  checkContinue(graph: ThreadGraph, nodeId: string): void;
}

/**
 * What the operations of a thread (prompt, pivot, stop, …, each in its own module) are written with: the thread's
 * state, and the steps they are made of, each of which commits, publishes or moves the generation in one named way.
 * `ThreadEngine` implements it; an operation runs in the thread's turn.
 */
export interface ThreadContext {
  readonly threadId: string;
  readonly graph: ThreadGraph;
  readonly record: ThreadRecord;
  readonly store: ConversationStore;
  readonly models: ModelCatalog;
  readonly limits: ThreadLimits;
  readonly observer: EngineObserver;
  readonly generation: ThreadGeneration;
  /** Runs the server's 'pivot' listeners with the context (none: nothing; the engine completes the pivot). */
  pivotListeners(context: PivotContext): Promise<void>;
  /** Runs the server's hooks of an operation, between its checks and its steps; one that throws refuses it. */
  runHooks(context: OperationContext): Promise<void>;

  /** Answers a requester with the whole thread (an exact retry's answer). */
  sendSync(requester: Subscriber): void;
  /** Commits the end of a stream that ended by itself while the operation waited its turn. */
  commitEnded(): Promise<void>;
  /** Halts this server's stream and sends CPP_STREAM_HALTED; `undefined` when none was streaming (see `ThreadGeneration.halt`). */
  halt(received: ReceivedLengths, reason: HaltReason): Promise<Cut | undefined>;
  /** Keeps a halted node, cut, as `interrupted`; `unannounced`: its CPP_STREAM_HALTED is sent only now (a dead node's). */
  commitHalt(nodeId: string, cut: Cut, unannounced?: HaltReason): Promise<void>;
  /** Plans a change (what it checks runs now); a refusal lets the generation lock go. */
  plan(plan: () => TreeChange): Promise<TreeChange>;
  /** Makes the model call of the answer `assistantNodeId` that `planned` creates, paused until `start`. */
  spawn(planned: TreeChange, assistantNodeId: string, requester: Subscriber): AnswerStream;
  /**
   * Commits a planned answer (planned again when another server committed first); the stream is made again when
   * the new plan moved the answer's context. A refused commit halts the stream.
   */
  commitAnswer(
    plan: () => TreeChange,
    planned: TreeChange,
    stream: AnswerStream,
    requester: Subscriber,
    titling: Titling,
  ): Promise<{ change: TreeChange; stream: AnswerStream }>;
  /** Plans and commits a change that starts no answer. */
  commit(plan: () => TreeChange, titling?: Titling): Promise<TreeChange>;
  /** Sends the committed change to the other servers and the subscribers. */
  publishChange(change: TreeChange): void;
  /** Publishes the change that started the answer, then lets its text flow: clients get the node before its first chunk. */
  insert(change: TreeChange, stream: AnswerStream): void;
  /** The thread was deleted from the store: every subscriber, here and on the other servers, is told and let go; later frames are NOT_FOUND. */
  deleted(): void;
}
