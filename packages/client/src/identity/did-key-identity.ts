import { decodeBase64Url, didKeyFromEd25519PublicKey, encodeBase64Url } from '@promethea/cpp-protocol';
import type { DidSigner } from './did-signer.js';
import {
  exportSeed,
  generateKeyPair,
  importSeed,
  sign,
  type Ed25519KeyPair,
  type Ed25519PrivateKey,
} from './ed25519-key.js';

/** An identity as it is kept: its DID and its private key (the 32-byte Ed25519 seed) as unpadded base64url. */
export interface StoredIdentity {
  did: string;
  privateKey: string;
}

export interface KeyOptions {
  /**
   * Whether the private key may be read back (`toStored()`). Default `false`: the key stays inside WebCrypto, which
   * signs with it but never hands it to a script (where the platform has no WebCrypto Ed25519, the key is bytes in
   * memory all the same: README, "Identity").
   */
  extractable?: boolean;
}

/**
 * An Ed25519 `did:key` identity: a private key, and the DID that carries its public key. Signing is WebCrypto's
 * (Node, and every current browser), or @noble/curves' where a browser has no Ed25519 in WebCrypto. WebCrypto is
 * asynchronous, and so are the factories and `sign`.
 */
export class DidKeyIdentity implements DidSigner {
  private constructor(
    readonly did: string,
    private readonly privateKey: Ed25519PrivateKey,
    /** Whether `toStored()` may hand out the key. */
    readonly extractable: boolean,
  ) {}

  /** A new identity, from the platform's cryptographic random source. */
  static async generate(options: KeyOptions = {}): Promise<DidKeyIdentity> {
    const extractable = options.extractable ?? false;
    return DidKeyIdentity.of(await generateKeyPair(extractable), extractable);
  }

  /** The identity of a 32-byte Ed25519 private key (seed), as bytes or unpadded base64url. Extractable by default. */
  static async fromPrivateKey(privateKey: Uint8Array | string, options: KeyOptions = {}): Promise<DidKeyIdentity> {
    const bytes = typeof privateKey === 'string' ? decodeBase64Url(privateKey) : privateKey;
    if (bytes?.length !== 32) throw new TypeError('an Ed25519 private key is 32 bytes');
    const extractable = options.extractable ?? true;
    return DidKeyIdentity.of(await importSeed(bytes, extractable), extractable);
  }

  /** An identity kept with `toStored()`; refused when its DID is not its key's. */
  static async fromStored(stored: StoredIdentity, options: KeyOptions = {}): Promise<DidKeyIdentity> {
    const identity = await DidKeyIdentity.fromPrivateKey(stored.privateKey, options);
    if (identity.did !== stored.did) throw new TypeError(`the kept private key is not the key of ${stored.did}`);
    return identity;
  }

  /** @internal The identity of a key pair made by this SDK (`browserIdentity()` keeps them in IndexedDB). */
  static of(pair: Ed25519KeyPair, extractable: boolean): DidKeyIdentity {
    return new DidKeyIdentity(didKeyFromEd25519PublicKey(pair.publicKey), pair.privateKey, extractable);
  }

  sign(message: Uint8Array): Promise<Uint8Array> {
    return sign(this.privateKey, message);
  }

  /** The identity as it is kept. It holds the private key: store it where only its owner can read it. */
  async toStored(): Promise<StoredIdentity> {
    if (!this.extractable)
      throw new TypeError(
        "this identity's private key is not extractable: make it with { extractable: true } to keep it yourself",
      );
    return { did: this.did, privateKey: encodeBase64Url(await exportSeed(this.privateKey)) };
  }
}
