import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  authStatementBytes,
  didKeyFromEd25519PublicKey,
  encodeBase64Url,
  type AuthChallengeFrame,
} from '@promethea/cpp-protocol';

/** An Ed25519 did:key a scenario proves it holds (docs/PROTOCOL.md §23.2), signing with Node's crypto. */
export class ProvingKey {
  readonly did: string;

  private constructor(
    private readonly privateKey: KeyObject,
    publicKey: KeyObject,
  ) {
    this.did = didKeyFromEd25519PublicKey(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
  }

  static generate(): ProvingKey {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    return new ProvingKey(privateKey, publicKey);
  }

  /** The proof's signature of the statement the challenge asks for. */
  sign({ audience, nonce, expiresAt }: AuthChallengeFrame['payload']): string {
    return encodeBase64Url(
      sign(null, authStatementBytes({ did: this.did, audience, nonce, expiresAt }), this.privateKey),
    );
  }
}
