import {
  didKeyFromEd25519PublicKey,
  ed25519PublicKeyFromDidKey,
  isDid,
  isEd25519DidKey,
} from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { DID_KEY } from '../support/sample-frames.js';

// The did:key specification's test vector: the Ed25519 key of the all-zero seed.
const ZERO_SEED_PUBLIC_KEY = Uint8Array.from(
  Buffer.from('3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29', 'hex'),
);

describe('did:key for Ed25519', () => {
  it('encodes a public key as the did:key specification does', () => {
    expect(didKeyFromEd25519PublicKey(ZERO_SEED_PUBLIC_KEY)).toBe(DID_KEY);
    expect(isDid(DID_KEY)).toBe(true);
  });

  it('decodes the public key a did:key carries', () => {
    expect(ed25519PublicKeyFromDidKey(DID_KEY)).toEqual(ZERO_SEED_PUBLIC_KEY);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => didKeyFromEd25519PublicKey(new Uint8Array(31))).toThrow(RangeError);
  });

  it.each([
    ['another DID method', 'did:web:example.com'],
    ['a claim shaped like a did:key', 'did:key:z6MkTester'],
    ['base58 with a character outside its alphabet', `${DID_KEY.slice(0, -1)}0`],
    ['a key one byte short', `did:key:z${DID_KEY.slice(10, -1)}`],
    ['another multicodec (secp256k1-pub)', 'did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme'],
    ['multibase other than base58btc', `did:key:u${DID_KEY.slice(9)}`],
  ])('is not an Ed25519 did:key: %s', (_, did) => {
    expect(ed25519PublicKeyFromDidKey(did)).toBeUndefined();
    expect(isEd25519DidKey(did)).toBe(false);
  });
});
