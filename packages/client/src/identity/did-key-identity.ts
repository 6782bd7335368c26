import { ed25519 } from '@noble/curves/ed25519.js';
import { decodeBase64Url, didKeyFromEd25519PublicKey, encodeBase64Url } from '@promethea/cpp-protocol';
import type { DidSigner } from './did-signer.js';

/** An identity as it is kept: its DID and its private key (the 32-byte Ed25519 seed) as unpadded base64url. */
export interface StoredIdentity {
  did: string;
  privateKey: string;
}

/**
 * An Ed25519 `did:key` identity: a private key, and the DID that carries its public key. Signing is
 * @noble/curves' audited Ed25519, which runs in every browser (WebCrypto's Ed25519 does not) and in Node.
 */
export class DidKeyIdentity implements DidSigner {
  readonly did: string;

  private constructor(private readonly privateKey: Uint8Array) {
    this.did = didKeyFromEd25519PublicKey(ed25519.getPublicKey(privateKey));
  }

  /** A new identity, from the platform's cryptographic random source. */
  static generate(): DidKeyIdentity {
    return new DidKeyIdentity(ed25519.utils.randomSecretKey());
  }

  /** The identity of a 32-byte Ed25519 private key (seed), as bytes or unpadded base64url. */
  static fromPrivateKey(privateKey: Uint8Array | string): DidKeyIdentity {
    const bytes = typeof privateKey === 'string' ? decodeBase64Url(privateKey) : privateKey;
    if (bytes?.length !== 32) throw new TypeError('an Ed25519 private key is 32 bytes');
    return new DidKeyIdentity(Uint8Array.from(bytes));
  }

  /** An identity kept with `toStored()`; refused when its DID is not its key's. */
  static fromStored(stored: StoredIdentity): DidKeyIdentity {
    const identity = DidKeyIdentity.fromPrivateKey(stored.privateKey);
    if (identity.did !== stored.did) throw new TypeError(`the kept private key is not the key of ${stored.did}`);
    return identity;
  }

  sign(message: Uint8Array): Uint8Array {
    return ed25519.sign(message, this.privateKey);
  }

  /** The identity as it is kept. It holds the private key: store it where only its owner can read it. */
  toStored(): StoredIdentity {
    return { did: this.did, privateKey: encodeBase64Url(this.privateKey) };
  }
}
