import { createPublicKey, verify } from 'node:crypto';
import { DidKeyIdentity } from '@promethea/cpp-client';
import { ed25519PublicKeyFromDidKey } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';

/** Checks a signature with Node's crypto (OpenSSL), independently of the library that made it. */
function verifiedByNode(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  const x = Buffer.from(ed25519PublicKeyFromDidKey(did)!).toString('base64url');
  return verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }), signature);
}

describe('DidKeyIdentity', () => {
  it('is the did:key of its private key, as the did:key specification computes it', () => {
    expect(DidKeyIdentity.fromPrivateKey(new Uint8Array(32)).did).toBe('did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp');
  });

  it('generates a new key each time, and signs with it', () => {
    const [first, second] = [DidKeyIdentity.generate(), DidKeyIdentity.generate()];
    expect(first.did).toMatch(/^did:key:z6Mk/);
    expect(first.did).not.toBe(second.did);
    const message = new TextEncoder().encode('CPP-AUTH-v1');
    expect(verifiedByNode(first.did, message, first.sign(message))).toBe(true);
    expect(verifiedByNode(second.did, message, first.sign(message))).toBe(false);
  });

  it('is kept and restored as its DID and its private key', () => {
    const identity = DidKeyIdentity.generate();
    const stored = identity.toStored();
    expect(stored.privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(DidKeyIdentity.fromStored(stored).did).toBe(identity.did);
    expect(DidKeyIdentity.fromPrivateKey(stored.privateKey).did).toBe(identity.did);
  });

  it('refuses a kept identity whose key is not its DID\'s, and a key that is not 32 bytes', () => {
    const stored = { ...DidKeyIdentity.generate().toStored(), did: DidKeyIdentity.generate().did };
    expect(() => DidKeyIdentity.fromStored(stored)).toThrow(/not the key of/);
    expect(() => DidKeyIdentity.fromPrivateKey(new Uint8Array(31))).toThrow(/32 bytes/);
    expect(() => DidKeyIdentity.fromPrivateKey('not base64url!')).toThrow(/32 bytes/);
  });
});
