import type { ClientFrame } from '@promethea/cpp-protocol';
import type { EngineObserver } from '../engine/engine-observer.js';
import type {
  DependedService,
  ErrorContext,
  GenerationObservation,
  GenerationStart,
  ObservedConnection,
  ObservedPivot,
  PivotObservation,
  SentError,
  ServerObserver,
  StoreOperationTiming,
} from './server-observer.js';

type Notification =
  | 'connectionOpened'
  | 'connectionClosed'
  | 'frameReceived'
  | 'errorSent'
  | 'storeOperation'
  | 'readinessFailed'
  | 'serverError'
  | 'serviceUnreachable'
  | 'serviceReachable';
type Arguments<Method extends Notification> = Parameters<NonNullable<ServerObserver[Method]>>;

/**
 * All of a server's observers as one. The engine, the sessions and the store call this at the few points that
 * matter; it passes each call on to every observer that implements it, and costs nothing without observers.
 */
export class Observers implements EngineObserver {
  private readonly observers: readonly ServerObserver[];

  constructor(observers: readonly ServerObserver[] = []) {
    this.observers = observers;
  }

  connectionOpened(connection: ObservedConnection): void {
    this.notify('connectionOpened', connection);
  }

  connectionClosed(connection: ObservedConnection): void {
    this.notify('connectionClosed', connection);
  }

  frameReceived(connection: ObservedConnection, frame: ClientFrame): void {
    this.notify('frameReceived', connection, frame);
  }

  /**
   * Called for every frame to every connection, a hundred times for one chunk of a thread a hundred members have
   * open: a plain loop, without the array of arguments `notify` makes for each call (about 5 % of the server's
   * `send` in the fan-out bench's CPU profile).
   */
  frameSent(connection: ObservedConnection, frame: string): void {
    for (const observer of this.observers) observer.frameSent?.(connection, frame);
  }

  errorSent(connection: ObservedConnection, error: SentError): void {
    this.notify('errorSent', connection, error);
  }

  storeOperation(timing: StoreOperationTiming): void {
    this.notify('storeOperation', timing);
  }

  readinessFailed(check: string, error: unknown): void {
    this.notify('readinessFailed', check, error);
  }

  serverError(error: unknown, context: ErrorContext = {}): void {
    this.notify('serverError', error, context);
  }

  serviceUnreachable(service: DependedService, error: unknown): void {
    this.notify('serviceUnreachable', service, error);
  }

  serviceReachable(service: DependedService): void {
    this.notify('serviceReachable', service);
  }

  pivotStarted(pivot: ObservedPivot): PivotObservation {
    const observations = this.observers.flatMap((observer) =>
      observer.pivotStarted ? [observer.pivotStarted(pivot)] : [],
    );
    return {
      // Each observer's step wraps the next one's, so that every observer sees the step's whole duration.
      step: (name, work) =>
        observations.reduceRight((inner, observation) => () => observation.step(name, inner), work)(),
      halted: () => {
        for (const observation of observations) observation.halted();
      },
      end: (error) => {
        for (const observation of observations) observation.end(error);
      },
    };
  }

  generationStarted(generation: GenerationStart): GenerationObservation {
    const observations = this.observers.flatMap((observer) =>
      observer.generationStarted ? [observer.generationStarted(generation)] : [],
    );
    return {
      firstChunk: () => {
        for (const observation of observations) observation.firstChunk();
      },
      ended: (result) => {
        for (const observation of observations) observation.ended(result);
      },
    };
  }

  private notify<Method extends Notification>(method: Method, ...args: Arguments<Method>): void {
    for (const observer of this.observers) {
      const callback = observer[method] as ((...values: Arguments<Method>) => void) | undefined;
      callback?.apply(observer, args);
    }
  }
}
