import type { ClientFrame, ErrorCode } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';

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

/** What a connection tells of its frames: for logs, metrics and traces (observability/observers.ts). */
export interface SessionObserver {
  /** A client frame was decoded and is about to be handled. */
  frameReceived(connection: ObservedConnection, frame: ClientFrame): void;
  /** An encoded server frame was handed to the connection. */
  frameSent(connection: ObservedConnection, frame: string): void;
  errorSent(connection: ObservedConnection, error: SentError): void;
}
