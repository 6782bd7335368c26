import { createPublicKey, verify } from 'node:crypto';
import { ed25519PublicKeyFromDidKey, encodeBase64Url } from '@promethea/cpp-protocol';

/**
 * Whether `signature` is the Ed25519 signature of `message` by the key an Ed25519 `did:key` carries. Verified by
 * Node's crypto (OpenSSL): no signature code of our own. False for any DID that is not an Ed25519 did:key, for a
 * key OpenSSL refuses (not a point of the curve), and for a key that is not a strict one (below).
 */
export function verifyDidKeySignature(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  const publicKey = ed25519PublicKeyFromDidKey(did);
  if (!publicKey || !isStrictEd25519PublicKey(publicKey)) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: encodeBase64Url(publicKey) }, format: 'jwk' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * The y coordinates (32 bytes little-endian, x's sign bit cleared) of the 8 points of small order: the identity
 * (y = 1), the point of order 2 (y = p − 1), the two of order 4 (y = 0) and the four of order 8 (two values of y,
 * each with either x). RFC 8032 §5.1.3 encodes a point as its y and the sign of its x.
 */
const SMALL_ORDER_Y = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
]);

/**
 * A key in its canonical encoding (y < p = 2^255 − 19) and not of small order. OpenSSL checks neither (RFC 8032
 * does not ask it to): with the identity point as the key, the signature R = identity, S = 0 verifies for every
 * message, so a DID anyone can "prove" (issue 21). Together with OpenSSL's refusal of a y that is on no point, this
 * is the strict decoding of RFC 8032 plus the small-order check (the 8 points' encodings, either sign of x).
 */
export function isStrictEd25519PublicKey(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32) return false;
  const y = Buffer.from(publicKey);
  y[31] = publicKey[31]! & 0x7f;
  return !isAtLeastFieldPrime(y) && !SMALL_ORDER_Y.has(y.toString('hex'));
}

/** Whether a 255-bit little-endian number is p = 2^255 − 19 or more: all ones above its lowest byte, which is ≥ 0xed. */
function isAtLeastFieldPrime(y: Buffer): boolean {
  return y[31] === 0x7f && y.subarray(1, 31).every((byte) => byte === 0xff) && y[0]! >= 0xed;
}
