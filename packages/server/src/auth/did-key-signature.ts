import { createPublicKey, verify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { ed25519PublicKeyFromDidKey, encodeBase64Url } from '@promethea/cpp-protocol';

/**
 * Whether `signature` is the Ed25519 signature of `message` by the key an Ed25519 `did:key` carries. Verified by
 * Node's crypto (OpenSSL): no signature code of our own. False for any DID that is not an Ed25519 did:key, for a
 * key OpenSSL refuses (not a point of the curve), and for a key that is not a strict one (below).
 */
export function verifyDidKeySignature(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  const publicKey = ed25519PublicKeyFromDidKey(did);
  if (!publicKey || !isStrictPublicKey(publicKey)) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(publicKey) }, format: 'jwk' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * A key in its canonical encoding and not of small order. OpenSSL checks neither (RFC 8032 does not ask it to): with
 * the identity point as the key, the signature R = identity, S = 0 verifies for every message, so a DID anyone can
 * "prove" (issue 21). The check is @noble/curves' strict decoding, the one its own strict verification makes.
 */
function isStrictPublicKey(publicKey: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(publicKey, false).isSmallOrder();
  } catch {
    return false;
  }
}
