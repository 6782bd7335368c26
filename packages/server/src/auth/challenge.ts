import { randomBytes } from 'node:crypto';
import { encodeBase64Url, type AuthChallengeFrame } from '@promethea/cpp-protocol';

export type Challenge = AuthChallengeFrame['payload'];

/** The longest a challenge may live, as docs/PROTOCOL.md allows. */
export const MAX_CHALLENGE_TTL_MS = 60_000;

const NONCE_BYTES = 32;

/** A fresh challenge for one connection: 256 random bits, for `audience`, valid `ttlMs` from `now`. */
export function issueChallenge(audience: string, ttlMs: number, now: number): Challenge {
  if (!(ttlMs > 0 && ttlMs <= MAX_CHALLENGE_TTL_MS))
    throw new RangeError(`a challenge lives 1 to ${MAX_CHALLENGE_TTL_MS} ms, not ${ttlMs}`);
  return { nonce: encodeBase64Url(randomBytes(NONCE_BYTES)), audience, issuedAt: now, expiresAt: now + ttlMs };
}
