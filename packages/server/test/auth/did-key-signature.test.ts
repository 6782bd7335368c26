import { randomBytes } from 'node:crypto';
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js';
import { didKeyFromEd25519PublicKey } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { isStrictEd25519PublicKey, verifyDidKeySignature } from '../../src/auth/did-key-signature.js';

// The server checks keys with a few lines of its own instead of loading @noble/curves (~80 ms at import); these
// tests hold those lines to noble's strict decoding and small-order check, the reference they replace.
function nobleAccepts(key: Uint8Array): boolean {
  try {
    return !ed25519.Point.fromBytes(key, false).isSmallOrder();
  } catch {
    return false;
  }
}

/** Whether the bytes decode to a point of the curve at all, canonical or not (ZIP 215's lenient decoding). */
function isPoint(key: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(key, true);
    return true;
  } catch {
    return false;
  }
}

const withSign = (key: Uint8Array, sign: 0 | 1) =>
  Uint8Array.from(key, (byte, index) => (index === 31 ? (byte & 0x7f) | (sign << 7) : byte));
/** y + k·(2^255 − 19) written in 255 bits: for y < 19, the second, non-canonical encoding of the same y. */
const plusFieldPrime = (key: Uint8Array) => {
  const y = BigInt(`0x${Buffer.from(withSign(key, 0)).reverse().toString('hex')}`) + (2n ** 255n - 19n);
  return Uint8Array.from(Buffer.from(y.toString(16).padStart(64, '0'), 'hex').reverse());
};
/** The forged signature R = identity, S = 0, which OpenSSL accepts from the identity point for every message. */
const forged = Uint8Array.from({ length: 64 }, (_, index) => (index === 0 ? 1 : 0));

describe('the strict Ed25519 key check', () => {
  const smallOrder = ED25519_TORSION_SUBGROUP.map((hex) => Uint8Array.from(Buffer.from(hex, 'hex')));

  it('refuses every encoding of the 8 points of small order, either sign of x', () => {
    for (const key of smallOrder.flatMap((point) => [withSign(point, 0), withSign(point, 1)])) {
      expect(isStrictEd25519PublicKey(key), Buffer.from(key).toString('hex')).toBe(false);
      expect(nobleAccepts(key)).toBe(false);
    }
  });

  it('refuses every non-canonical encoding (y ≥ 2^255 − 19), the identity point written as 2^255 − 18 among them', () => {
    for (let low = 0; low < 19; low++) {
      const y = Uint8Array.from({ length: 32 }, (_, index) => (index === 0 ? low : 0));
      for (const key of [withSign(plusFieldPrime(y), 0), withSign(plusFieldPrime(y), 1)]) {
        expect(isStrictEd25519PublicKey(key), Buffer.from(key).toString('hex')).toBe(false);
        expect(nobleAccepts(key)).toBe(false);
      }
    }
    expect(
      verifyDidKeySignature(
        didKeyFromEd25519PublicKey(plusFieldPrime(smallOrder[0]!)),
        Buffer.from('any message'),
        forged,
      ),
    ).toBe(false);
  });

  it('agrees with @noble/curves on every point: real keys, and keys with a small-order part added, are accepted', () => {
    const keys = Array.from({ length: 100 }, () => ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
    const torsion = ed25519.Point.fromBytes(smallOrder[1]!, false);
    const mixed = keys.slice(0, 50).map((key) => ed25519.Point.fromBytes(key, false).add(torsion).toBytes());
    const random = Array.from({ length: 1000 }, () => Uint8Array.from(randomBytes(32))).filter(isPoint);
    for (const key of [...keys, ...mixed, ...random])
      expect(isStrictEd25519PublicKey(key), Buffer.from(key).toString('hex')).toBe(nobleAccepts(key));
    expect(keys.every(isStrictEd25519PublicKey) && mixed.every(isStrictEd25519PublicKey)).toBe(true);
  });

  it('leaves a y on no point of the curve to OpenSSL, which refuses it', () => {
    const offCurve = Array.from({ length: 200 }, () => Uint8Array.from(randomBytes(32))).filter(
      (key) => !isPoint(key) && isStrictEd25519PublicKey(key),
    );
    expect(offCurve.length).toBeGreaterThan(0);
    for (const key of offCurve)
      expect(verifyDidKeySignature(didKeyFromEd25519PublicKey(key), Buffer.from('any message'), forged)).toBe(false);
  });

  it('refuses a key of another length', () => {
    expect(isStrictEd25519PublicKey(new Uint8Array(31))).toBe(false);
  });
});
