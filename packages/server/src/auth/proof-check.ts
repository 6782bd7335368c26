import { authStatementBytes, decodeBase64Url, isEd25519DidKey, type AuthProofFrame } from '@promethea/cpp-protocol';
import type { Challenge } from './challenge.js';
import { verifyDidKeySignature } from './did-key-signature.js';
import type { ReplayCache } from './replay-cache.js';

export type Proof = AuthProofFrame['payload'];

export interface ProofContext {
  /** The challenge this connection was sent and has not answered yet. */
  challenge: Challenge | undefined;
  /** The DID the connection claimed at the upgrade, if any: a proof must be for that DID. */
  claimedDid: string | undefined;
  replayCache: ReplayCache;
  now: number;
  /** How long after `expiresAt` a proof is still taken, for clocks of cluster nodes that differ slightly. */
  clockSkewMs: number;
}

export type ProofOutcome = { ok: true; did: string } | { ok: false; reason: string };

/**
 * Checks a proof of possession against the connection's own challenge, in the order of docs/PROTOCOL.md §2.5, and
 * says why it fails. Only a proof that holds in every other respect marks its nonce used, so that nobody can spend
 * someone else's nonce with a bad signature.
 */
export function checkProof(proof: Proof, context: ProofContext): ProofOutcome {
  const { challenge } = context;
  if (!challenge) return refuse('no authentication challenge is pending on this connection');
  if (proof.nonce !== challenge.nonce)
    return refuse("the proof answers another connection's challenge, not this one's");
  if (context.now > challenge.expiresAt + context.clockSkewMs)
    return refuse('the challenge expired; connect again for a new one');
  if (!isEd25519DidKey(proof.did)) return refuse('only Ed25519 did:key identities (did:key:z6Mk…) can be proven');
  if (context.claimedDid !== undefined && context.claimedDid !== proof.did)
    return refuse('the proof is for another DID than the one this connection claimed');
  const signature = decodeBase64Url(proof.signature);
  const statement = authStatementBytes({
    did: proof.did,
    audience: challenge.audience,
    nonce: challenge.nonce,
    expiresAt: challenge.expiresAt,
  });
  if (!signature || !verifyDidKeySignature(proof.did, statement, signature))
    return refuse(`the signature is not ${proof.did}'s signature of this challenge`);
  if (!context.replayCache.use(challenge.nonce, challenge.expiresAt + context.clockSkewMs))
    return refuse('the nonce was already used');
  return { ok: true, did: proof.did };
}

function refuse(reason: string): ProofOutcome {
  return { ok: false, reason };
}
