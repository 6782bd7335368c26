import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  authStatementBytes,
  didKeyFromEd25519PublicKey,
  encodeBase64Url,
  type AuthChallengeFrame,
} from '@promethea/cpp-protocol';

export type ChallengePayload = AuthChallengeFrame['payload'];

/** A did:key identity of the tests' own, signing with Node's crypto: independent of the client SDK's signer. */
export class TestIdentity {
  readonly did: string;

  private constructor(
    private readonly privateKey: KeyObject,
    publicKey: KeyObject,
  ) {
    const jwk = publicKey.export({ format: 'jwk' });
    this.did = didKeyFromEd25519PublicKey(Buffer.from(jwk.x!, 'base64url'));
  }

  static generate(): TestIdentity {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    return new TestIdentity(privateKey, publicKey);
  }

  /** The signature, as the proof carries it, of the statement for `challenge` made out to `did` (default: this identity's). */
  signChallenge(challenge: ChallengePayload, did = this.did): string {
    const statement = authStatementBytes({
      did,
      audience: challenge.audience,
      nonce: challenge.nonce,
      expiresAt: challenge.expiresAt,
    });
    return encodeBase64Url(sign(null, statement, this.privateKey));
  }
}
