import { DID_MAX_LENGTH } from './did.js';
import { decodeBase58, encodeBase58 } from './encodings.js';

/**
 * `did:key` for Ed25519 (https://w3c-ccg.github.io/did-key-spec/): the multibase prefix `z` (base58btc) over the
 * multicodec varint of `ed25519-pub` (0xed 0x01) and the 32-byte public key. Such DIDs start with `did:key:z6Mk`.
 */
const DID_KEY_PREFIX = 'did:key:z';
const ED25519_PUB_MULTICODEC = Uint8Array.of(0xed, 0x01);
const ED25519_PUBLIC_KEY_BYTES = 32;

export function didKeyFromEd25519PublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== ED25519_PUBLIC_KEY_BYTES)
    throw new RangeError(`an Ed25519 public key is ${ED25519_PUBLIC_KEY_BYTES} bytes, not ${publicKey.length}`);
  const bytes = new Uint8Array(ED25519_PUB_MULTICODEC.length + publicKey.length);
  bytes.set(ED25519_PUB_MULTICODEC);
  bytes.set(publicKey, ED25519_PUB_MULTICODEC.length);
  return DID_KEY_PREFIX + encodeBase58(bytes);
}

/** The Ed25519 public key a `did:key` carries, or `undefined` when the DID is not an Ed25519 `did:key`. */
export function ed25519PublicKeyFromDidKey(did: string): Uint8Array | undefined {
  if (!did.startsWith(DID_KEY_PREFIX) || did.length > DID_MAX_LENGTH) return undefined;
  const bytes = decodeBase58(did.slice(DID_KEY_PREFIX.length));
  if (!bytes || bytes.length !== ED25519_PUB_MULTICODEC.length + ED25519_PUBLIC_KEY_BYTES) return undefined;
  if (bytes[0] !== ED25519_PUB_MULTICODEC[0] || bytes[1] !== ED25519_PUB_MULTICODEC[1]) return undefined;
  return bytes.slice(ED25519_PUB_MULTICODEC.length);
}

export function isEd25519DidKey(did: string): boolean {
  return ed25519PublicKeyFromDidKey(did) !== undefined;
}
