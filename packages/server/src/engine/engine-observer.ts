import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import type { PivotRequest } from './pivot-context.js';

/** How a model call ended by itself. */
export type AnswerOutcome =
  | { kind: 'completed'; finishReason: FinishReason; usage?: TokenUsage }
  | { kind: 'failed'; error: unknown };

/**
 * The steps of a pivot, in order: `abort` (the stream is cut and CPP_STREAM_HALTED sent), `spawn` (the new
 * answer's model call is made, its text held), `commit` (the cut and the new branch, together), `insert` (the
 * structural update is sent and the new answer streams).
 */
export type PivotStep = 'abort' | 'spawn' | 'commit' | 'insert';

/** One pivot, from CPP_PIVOT_INIT to the start of the new answer. */
export interface PivotObservation {
  /** Runs one step of the pivot (`work` may be synchronous or return a promise) and returns what it returns. */
  step<Result>(name: PivotStep, work: () => Result): Result;
  /** CPP_STREAM_HALTED has been sent for the interrupted node. */
  halted(): void;
  /** The pivot is over: done, or refused or failed with `error`. Called once. */
  end(error?: unknown): void;
}

/** A pivot, and the connection that asked for it (none when another server of the cluster forwarded it). */
export interface ObservedPivot extends PivotRequest {
  connectionId?: string | undefined;
}

/** A model call that writes one assistant node. */
export interface GenerationStart {
  /** The connection whose prompt or pivot started it (none when another server of the cluster forwarded it). */
  connectionId?: string | undefined;
  threadId: string;
  nodeId: string;
  provider: string;
  model: string;
  /** Turns of context given to the model. */
  contextMessages: number;
}

/** How a model call ended, for observers (not the client SDK's `GenerationResult`, which is what a prompt resolves with). */
export interface GenerationResult {
  /** How the stream ended: by itself, or halted by a pivot, a stop or the shutdown. */
  outcome: AnswerOutcome | { kind: 'halted' };
  /** The text sent to clients. */
  text: string;
  /** The deltas sent to clients. */
  chunkCount: number;
}

export interface GenerationObservation {
  /** The first delta of the answer reached the clients. */
  firstChunk(): void;
  /** The model call is over. Called once. */
  ended(result: GenerationResult): void;
}

/**
 * The engine's port to whoever watches it (observability implements it; `ServerObserver` is its public face). It
 * is told when a pivot or a model call starts and gets their observations back; it wraps a pivot's steps from the
 * outside (`PivotObservation.step`), so the pivot itself says nothing about being watched.
 */
export interface EngineObserver {
  pivotStarted(pivot: ObservedPivot): PivotObservation;
  generationStarted(generation: GenerationStart): GenerationObservation;
}
