import { readFileSync } from 'node:fs';
import { decodeClientFrame, decodeServerFrame } from '@promethea/cpp-protocol';
import { MemoryReplayCache } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { issueChallenge } from '../../src/auth/challenge.js';
import { checkProof, type ProofContext } from '../../src/auth/proof-check.js';
import { TestIdentity } from './support/did-key-identity.js';

const alice = TestIdentity.generate();
const challenge = issueChallenge('wss://chat.example/v1/cpp/session', 30_000, 1_000_000);
const proof = { did: alice.did, nonce: challenge.nonce, signature: alice.signChallenge(challenge) };
const context = (fields: Partial<ProofContext> = {}): ProofContext => ({
  challenge,
  claimedDid: undefined,
  replayCache: new MemoryReplayCache(() => 1_000_000),
  now: 1_000_000,
  clockSkewMs: 2_000,
  ...fields,
});

describe('checkProof', () => {
  it('proves the DID that signed the challenge', () => {
    expect(checkProof(proof, context())).toEqual({ ok: true, did: alice.did });
  });

  it('takes a proof up to the clock skew after the expiry, and not later', () => {
    expect(checkProof(proof, context({ now: challenge.expiresAt + 2_000 })).ok).toBe(true);
    expect(checkProof(proof, context({ now: challenge.expiresAt + 2_001 }))).toEqual({
      ok: false,
      reason: expect.stringMatching(/expired/),
    });
  });

  it('refuses a nonce the replay cache has seen, even while its challenge is pending', () => {
    const replayCache = new MemoryReplayCache(() => 1_000_000);
    expect(checkProof(proof, context({ replayCache })).ok).toBe(true);
    expect(checkProof(proof, context({ replayCache }))).toEqual({ ok: false, reason: 'the nonce was already used' });
  });

  it('leaves the nonce unused when the signature fails, so a bad proof cannot spend it', () => {
    const replayCache = new MemoryReplayCache(() => 1_000_000);
    const forged = { ...proof, signature: TestIdentity.generate().signChallenge(challenge, alice.did) };
    expect(checkProof(forged, context({ replayCache })).ok).toBe(false);
    expect(checkProof(proof, context({ replayCache })).ok).toBe(true);
  });

  it('refuses a signature that is not base64url of 64 bytes', () => {
    expect(checkProof({ ...proof, signature: 'A'.repeat(86) }, context()).ok).toBe(false);
  });
});

describe('the proof in docs/PROTOCOL.md', () => {
  it('is a valid proof of its challenge', () => {
    const document = readFileSync(new URL('../../../../docs/PROTOCOL.md', import.meta.url), 'utf8');
    const frames = [...document.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]!);
    const challengeText = frames.find((text) => text.includes('"CPP_AUTH_CHALLENGE"'))!;
    const proofText = frames.find((text) => text.includes('"CPP_AUTH_PROOF"'))!;
    const documented = decodeServerFrame(challengeText);
    const documentedProof = decodeClientFrame(proofText);
    if (
      !documented.ok ||
      documented.frame.type !== 'CPP_AUTH_CHALLENGE' ||
      !documentedProof.ok ||
      documentedProof.frame.type !== 'CPP_AUTH_PROOF'
    ) {
      throw new Error('the documented challenge and proof do not decode');
    }
    const outcome = checkProof(
      documentedProof.frame.payload,
      context({ challenge: documented.frame.payload, now: documented.frame.payload.issuedAt }),
    );
    expect(outcome).toEqual({ ok: true, did: 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp' });
  });
});
