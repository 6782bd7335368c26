import type { ClientFrame } from '@promethea/cpp-protocol';
import type {
  GenerationObservation,
  GenerationStart,
  ObservedPivot,
  PivotObservation,
} from '../engine/engine-observer.js';
import type { ObservedConnection, SentError } from '../session/session-observer.js';
import type { ConversationStore } from '../store/conversation-store.js';

// The engine owns the observation types it calls; they are part of the server's observer API too.
export type {
  GenerationObservation,
  GenerationResult,
  GenerationStart,
  ObservedPivot,
  PivotObservation,
  PivotStep,
} from '../engine/engine-observer.js';

// So does the session: what it observes of a connection.
export type { ObservedConnection, SentError } from '../session/session-observer.js';

/** Where a server error happened, as far as is known. */
/** The services a server depends on, named as its readiness checks are: the store's database, the cluster's Redis. */
export type DependedService = 'store' | 'cluster';

export interface ErrorContext {
  connectionId?: string | undefined;
  threadId?: string | undefined;
}

/** A store's methods, and an upload's finish (`AttachmentUpload.finish`). */
export type StoreOperation = Exclude<keyof ConversationStore, 'close'> | 'finishAttachment';

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
  /**
   * An operation failed because `service` could not be reached: part of an outage, reported in place of
   * `serverError` (each failure; the log observer tells the outage once, see `OutageLog`).
   */
  serviceUnreachable?(service: DependedService, error: unknown): void;
  /** `service` answers again after failures reported by `serviceUnreachable`. */
  serviceReachable?(service: DependedService): void;
}
