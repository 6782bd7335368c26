import type { ClientFrame, ErrorCode } from '@promethea/cpp-protocol';
import type { GenerationOutcome } from '../engine/generation.js';
import type { Identity } from '../engine/identity.js';
import type { PivotRequest } from '../engine/pivot-context.js';
import type { ConversationStore } from '../store/conversation-store.js';

/** A connection, as observers see it. */
export interface ObservedConnection {
  readonly id: string;
  readonly identity: Identity;
}

/** A CPP_ERROR sent to a connection, answering one of its frames (or an undecodable one). */
export interface SentError {
  code: ErrorCode;
  message: string;
  refType?: string;
  refId?: string;
}

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

export interface GenerationResult {
  /** How the stream ended: by itself, or halted by a pivot, a stop or the shutdown. */
  outcome: GenerationOutcome | { kind: 'halted' };
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

/** Where a server error happened, as far as is known. */
export interface ErrorContext {
  connectionId?: string | undefined;
  threadId?: string | undefined;
}

export type StoreOperation = Exclude<keyof ConversationStore, 'close'>;

export interface StoreOperationTiming {
  operation: StoreOperation;
  durationMs: number;
  failed: boolean;
}

/**
 * What the server tells whoever watches it: logs, metrics and traces are observers, and an application can add
 * its own through `CPPServerOptions.observers`. Every method is optional. Observers are called synchronously on
 * the server's hot paths: they must be quick and must not throw.
 */
export interface ServerObserver {
  connectionOpened?(connection: ObservedConnection): void;
  connectionClosed?(connection: ObservedConnection): void;
  /** A client frame was decoded and is about to be handled. */
  frameReceived?(connection: ObservedConnection, frame: ClientFrame): void;
  /** An encoded server frame was handed to the connection. */
  frameSent?(connection: ObservedConnection, frame: string): void;
  errorSent?(connection: ObservedConnection, error: SentError): void;
  pivotStarted?(pivot: ObservedPivot): PivotObservation;
  generationStarted?(generation: GenerationStart): GenerationObservation;
  storeOperation?(timing: StoreOperationTiming): void;
  /** A readiness check (GET /readyz) failed; `error` says why, which the probe's answer does not. */
  readinessFailed?(check: string, error: unknown): void;
  /** A failure no client frame reports: a background commit, a batch that could not be persisted, a bug. */
  serverError?(error: unknown, context: ErrorContext): void;
}
