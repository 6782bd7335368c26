import type { ThreadGraph, TreeChange } from '@promethea/cpp-protocol';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ConversationStore, ThreadRecord } from '../store/conversation-store.js';
import type { ThreadAnswer, ThreadGeneration, Titling } from './answer.js';
import type { OperationContext } from './operation-context.js';
import type { PivotContext } from './pivot-context.js';
import type { Subscriber } from './subscriber.js';

/**
 * The limits on how a thread grows, checked in the thread's turn: a frame's refusal never overtakes the answers to
 * the frames before it. RATE_LIMITED when past them.
 */
export interface ThreadLimits {
  /**
   * CPP_PROMPT and CPP_PIVOT_INIT: the prompt's length, and room for the prompt's node and its `answers` (one, or one
   * per model side by side).
   */
  checkPrompt(graph: ThreadGraph, userPrompt: string, newNodeId: string, answers?: number): void;
  /** Room for `count` more nodes, the first of them `newNodeId` (CPP_REGENERATE adds one). */
  checkRoom(graph: ThreadGraph, newNodeId: string, count: number): void;
  /** CPP_CONTINUE: room for more text in the thread, unless `nodeId` streams (a retry). */
  checkContinue(graph: ThreadGraph, nodeId: string): void;
}

/**
 * What the operations of a thread (prompt, pivot, stop, …, each in its own module) are written with: the thread's
 * state, its answer (`ThreadAnswer`: halt, start, commit, each called directly), and the few things only the engine
 * can do. `ThreadEngine` implements it; an operation runs in the thread's turn.
 */
export interface ThreadContext {
  readonly threadId: string;
  readonly graph: ThreadGraph;
  readonly record: ThreadRecord;
  readonly store: ConversationStore;
  readonly models: ModelCatalog;
  readonly limits: ThreadLimits;
  readonly generation: ThreadGeneration;
  readonly answer: ThreadAnswer;
  /** Runs the server's 'pivot' listeners with the context (none: nothing; the engine completes the pivot). */
  pivotListeners(context: PivotContext): Promise<void>;
  /** Runs the server's hooks of an operation, between its checks and its steps; one that throws refuses it. */
  runHooks(context: OperationContext): Promise<void>;
  /** Answers a requester with the whole thread (an exact retry's answer). */
  sendSync(requester: Subscriber): void;
  /** Plans and commits a change that starts no answer (`ThreadAnswer.commit`). */
  commit(plan: () => TreeChange, titling?: Titling): Promise<TreeChange>;
  /** Sends the committed change to the other servers and the subscribers. */
  publishChange(change: TreeChange): void;
  /** The thread was deleted from the store: every subscriber, here and on the other servers, is told and let go; later frames are NOT_FOUND. */
  deleted(): void;
}
