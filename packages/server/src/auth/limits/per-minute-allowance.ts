import { CPPError, ErrorCode } from '@promethea/cpp-protocol';
import { ANONYMOUS_DID, type Identity } from '../../engine/identity.js';
import { KeyedRateLimiter } from './keyed-rate-limiter.js';

/**
 * How many requests of one kind (syncs, searches) an identity may make per minute, over all its connections, at most
 * that many at once: RATE_LIMITED past it, the message naming the limit. Anonymous connections are nobody's, so each
 * has an allowance of its own. 0 per minute: no limit.
 */
export class PerMinuteAllowance {
  private readonly limiter: KeyedRateLimiter | undefined;

  constructor(
    private readonly perMinute: number,
    /** The requests counted, as the refusal names them ("too many syncs"). */
    private readonly requests: string,
  ) {
    this.limiter = perMinute > 0 ? new KeyedRateLimiter(perMinute / 60, perMinute) : undefined;
  }

  /** Counts one request of `identity` on connection `connectionId`; RATE_LIMITED when none is left. */
  take(identity: Identity, connectionId: string): void {
    if (
      !this.limiter ||
      this.limiter.take(identity.did === ANONYMOUS_DID ? `connection ${connectionId}` : identity.did)
    )
      return;
    throw new CPPError(ErrorCode.RATE_LIMITED, `too many ${this.requests}: the limit is ${this.perMinute} per minute`);
  }
}
