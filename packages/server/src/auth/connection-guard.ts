import {
  CPPError,
  CloseCode,
  ErrorCode,
  encodeServerFrame,
  type AuthProofFrame,
  type ErrorCode as ErrorCodeType,
} from '@promethea/cpp-protocol';
import { ANONYMOUS_DID, type Identity } from '../engine/identity.js';
import type { Challenge } from './challenge.js';
import type { ConnectionCounter } from './limits/connection-counter.js';
import { DropReports, FramePace } from './limits/frame-pace.js';
import type { ServerLimits } from './limits/server-limits.js';
import { checkProof } from './proof-check.js';
import type { ReplayCache } from './replay-cache.js';
import type { Admission } from './upgrade-admission.js';

/** What the guard needs of its connection. */
export interface GuardedConnection {
  readonly id: string;
  send(text: string): void;
  sendError(code: ErrorCodeType, message: string, reference: { refId?: string; refType?: string }): void;
  close(code: number, reason: string): void;
  /** Bounds the messages the connection reads (no argument: the transport's own limit again). */
  limitMessageBytes(bytes?: number): void;
}

/**
 * The largest message a connection reads while its proof is awaited: a proof is under 1 KB, and nothing else is
 * taken before it. Larger frames close the connection with 1009 before their payload is buffered, so connections
 * that never prove anything cannot hold megabytes each (issue 21).
 */
export const UNPROVEN_MAX_MESSAGE_BYTES = 4096;

export interface GuardSettings {
  limits: ServerLimits;
  replayCache: ReplayCache;
  clockSkewMs: number;
  /** The open connections per DID. */
  dids: ConnectionCounter;
  /** A proof was accepted on connection `connectionId`. */
  onAuthenticated(identity: Identity, connectionId: string): void;
}

/**
 * One connection's identity and allowances: it sends the challenge, takes the proof, refuses frames until a
 * required proof is in, paces frames, counts the connection against its DID, and ends a connection that never
 * authenticates or falls silent. Everything it refuses has the answer docs/PROTOCOL.md gives it.
 */
export class ConnectionGuard {
  private current: Identity;
  private challenge: Challenge | undefined;
  private awaitingProof: boolean;
  private connection: GuardedConnection | undefined;
  private readonly pace: FramePace | undefined;
  private readonly dropReports = new DropReports((message) =>
    this.connection?.sendError(ErrorCode.RATE_LIMITED, message, {}),
  );
  private authTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private releaseDid: (() => void) | undefined;
  private closed = false;

  constructor(
    admission: Admission,
    private readonly settings: GuardSettings,
    /** Uncounts the connection's address: called once, when the connection ends. */
    private readonly releaseAddress: () => void,
  ) {
    this.current = admission.identity;
    this.challenge = admission.challenge;
    this.awaitingProof = admission.proofRequired;
    const { framesPerSecond, frameBurst } = settings.limits;
    this.pace = framesPerSecond > 0 ? new FramePace(framesPerSecond, Math.max(1, frameBurst)) : undefined;
  }

  get identity(): Identity {
    return this.current;
  }

  /** The connection is open: its challenge goes out first, and its clocks start. */
  attach(connection: GuardedConnection): void {
    this.connection = connection;
    if (this.challenge) connection.send(encodeServerFrame('CPP_AUTH_CHALLENGE', this.challenge));
    if (this.awaitingProof) {
      connection.limitMessageBytes(UNPROVEN_MAX_MESSAGE_BYTES);
      this.authTimer = this.timer(this.settings.limits.authTimeoutMs, 'authentication did not finish in time');
    } else {
      this.countIdentity();
    }
    this.heardFrom();
  }

  /** Every frame, whatever it holds, before it is read: false when it is not to be handled. */
  admitMessage(): boolean {
    if (this.closed) return false;
    this.heardFrom();
    const admission = this.pace?.take() ?? 'accepted';
    if (admission === 'accepted') return true;
    if (admission === 'exceeded') this.close(CloseCode.TOO_MANY_REQUESTS, 'too many frames');
    else this.dropReports.dropped(`the limit is ${this.settings.limits.framesPerSecond} frames per second`);
    return false;
  }

  /** Before any frame other than a proof: refused while a required proof is missing. */
  requireIdentity(): void {
    if (this.awaitingProof)
      throw new CPPError(
        ErrorCode.UNAUTHORIZED,
        'authenticate first: answer the CPP_AUTH_CHALLENGE with a CPP_AUTH_PROOF',
      );
  }

  /** CPP_AUTH_PROOF: accepted (CPP_AUTH_ACCEPTED), or refused with UNAUTHORIZED and the connection closed with 4401. */
  authenticate(frame: AuthProofFrame): void {
    const outcome = checkProof(frame.payload, {
      challenge: this.challenge,
      claimedDid: this.current.did === ANONYMOUS_DID ? undefined : this.current.did,
      replayCache: this.settings.replayCache,
      now: Date.now(),
      clockSkewMs: this.settings.clockSkewMs,
    });
    if (!outcome.ok) {
      this.connection?.sendError(ErrorCode.UNAUTHORIZED, outcome.reason, {
        refType: frame.type,
        refId: frame.id,
      });
      this.close(CloseCode.UNAUTHORIZED, 'authentication failed');
      return;
    }
    this.challenge = undefined;
    this.current = { did: outcome.did, verified: true };
    this.awaitingProof = false;
    clearTimeout(this.authTimer);
    this.connection?.limitMessageBytes();
    if (!this.releaseDid) this.countIdentity();
    if (this.closed || !this.connection) return;
    this.connection.send(encodeServerFrame('CPP_AUTH_ACCEPTED', { did: outcome.did }));
    this.settings.onAuthenticated(this.current, this.connection.id);
  }

  /** The connection ended. */
  detach(): void {
    this.dropReports.stop();
    clearTimeout(this.authTimer);
    clearTimeout(this.idleTimer);
    this.releaseDid?.();
    this.releaseAddress();
  }

  /** The per-DID limit, once the connection's identity is settled. Anonymous connections are nobody's. */
  private countIdentity(): void {
    const { did } = this.current;
    const max = this.settings.limits.maxConnectionsPerDid;
    if (did === ANONYMOUS_DID) return;
    if (max > 0 && this.settings.dids.count(did) >= max) {
      this.connection?.sendError(ErrorCode.RATE_LIMITED, `${did} has ${max} connections open already, the limit`, {});
      this.close(CloseCode.TOO_MANY_REQUESTS, 'too many connections for this DID');
      return;
    }
    this.releaseDid = this.settings.dids.acquire(did);
  }

  private heardFrom(): void {
    const { idleTimeoutMs } = this.settings.limits;
    if (idleTimeoutMs <= 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = this.timer(idleTimeoutMs, 'idle for too long');
  }

  private timer(delayMs: number, reason: string): NodeJS.Timeout | undefined {
    if (delayMs <= 0) return undefined;
    const timer = setTimeout(() => this.close(CloseCode.TIMEOUT, reason), delayMs);
    // A connection's clock never keeps the process alive on its own.
    timer.unref();
    return timer;
  }

  /** Nothing the connection sends is taken any more while it closes. */
  private close(code: number, reason: string): void {
    this.closed = true;
    this.dropReports.stop();
    clearTimeout(this.authTimer);
    clearTimeout(this.idleTimer);
    this.connection?.close(code, reason);
  }
}
