import { createPublicKey, verify } from 'node:crypto';
import { ed25519PublicKeyFromDidKey, encodeBase64Url } from '@promethea/cpp-protocol';

/**
 * Whether `signature` is the Ed25519 signature of `message` by the key an Ed25519 `did:key` carries. Verified by
 * Node's crypto (OpenSSL): no signature code of our own. False for any DID that is not an Ed25519 did:key and for a
 * key OpenSSL refuses (not a point of the curve).
 */
export function verifyDidKeySignature(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  const publicKey = ed25519PublicKeyFromDidKey(did);
  if (!publicKey) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(publicKey) }, format: 'jwk' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
