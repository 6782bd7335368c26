import { createPublicKey, verify } from 'node:crypto';
import { DidKeyIdentity } from '@promethea/cpp-client';
import { ed25519PublicKeyFromDidKey } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** Checks a signature with Node's crypto (OpenSSL), independently of the library that made it. */
function verifiedByNode(did: string, message: Uint8Array, signature: Uint8Array): boolean {
  const x = Buffer.from(ed25519PublicKeyFromDidKey(did)!).toString('base64url');
  return verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }), signature);
}

describe('DidKeyIdentity', () => {
  it('is the did:key of its private key, as the did:key specification computes it', async () => {
    expect((await DidKeyIdentity.fromPrivateKey(new Uint8Array(32))).did).toBe(
      'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp',
    );
  });

  it('generates a new key each time, and signs with it', async () => {
    const [first, second] = await Promise.all([DidKeyIdentity.generate(), DidKeyIdentity.generate()]);
    expect(first.did).toMatch(/^did:key:z6Mk/);
    expect(first.did).not.toBe(second.did);
    const message = new TextEncoder().encode('CPP-AUTH-v1');
    expect(verifiedByNode(first.did, message, await first.sign(message))).toBe(true);
    expect(verifiedByNode(second.did, message, await first.sign(message))).toBe(false);
  });

  it('signs with a key made from bytes as with the same key generated', async () => {
    const generated = await DidKeyIdentity.generate({ extractable: true });
    const restored = await DidKeyIdentity.fromStored(await generated.toStored(), { extractable: false });
    const message = new TextEncoder().encode('the same bytes');
    expect(restored.did).toBe(generated.did);
    expect(Buffer.from(await restored.sign(message))).toEqual(Buffer.from(await generated.sign(message)));
  });

  it('is kept and restored as its DID and its private key, when made extractable', async () => {
    const identity = await DidKeyIdentity.generate({ extractable: true });
    const stored = await identity.toStored();
    expect(stored.privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await DidKeyIdentity.fromStored(stored)).did).toBe(identity.did);
    expect((await DidKeyIdentity.fromPrivateKey(stored.privateKey)).did).toBe(identity.did);
  });

  it('does not hand out a key that is not extractable (the default of generate)', async () => {
    await expect((await DidKeyIdentity.generate()).toStored()).rejects.toThrow(/not extractable/);
    await expect(
      (await DidKeyIdentity.fromPrivateKey(new Uint8Array(32), { extractable: false })).toStored(),
    ).rejects.toThrow(/not extractable/);
  });

  it("refuses a kept identity whose key is not its DID's, and a key that is not 32 bytes", async () => {
    const stored = {
      ...(await (await DidKeyIdentity.generate({ extractable: true })).toStored()),
      did: (await DidKeyIdentity.generate()).did,
    };
    await expect(DidKeyIdentity.fromStored(stored)).rejects.toThrow(/not the key of/);
    await expect(DidKeyIdentity.fromPrivateKey(new Uint8Array(31))).rejects.toThrow(/32 bytes/);
    await expect(DidKeyIdentity.fromPrivateKey('not base64url!')).rejects.toThrow(/32 bytes/);
  });

  describe('on a platform without Ed25519 in WebCrypto', () => {
    afterEach(() => vi.unstubAllGlobals());
    const unsupported = () => Promise.reject(new DOMException('Ed25519 is not supported', 'NotSupportedError'));

    it('signs with @noble/curves instead, with the same keys and signatures', async () => {
      const webCrypto = await DidKeyIdentity.generate({ extractable: true });
      const message = new TextEncoder().encode('CPP-AUTH-v1');
      const [stored, expected] = await Promise.all([webCrypto.toStored(), webCrypto.sign(message)]);
      const subtle = { generateKey: unsupported, importKey: unsupported, exportKey: unsupported, sign: unsupported };
      const { getRandomValues } = globalThis.crypto;
      vi.stubGlobal('crypto', { getRandomValues: getRandomValues.bind(globalThis.crypto), subtle });

      const restored = await DidKeyIdentity.fromStored(stored);
      expect(restored.did).toBe(webCrypto.did);
      expect(Buffer.from(await restored.sign(message))).toEqual(Buffer.from(expected));
      const generated = await DidKeyIdentity.generate();
      expect(verifiedByNode(generated.did, message, await generated.sign(message))).toBe(true);
      await expect(generated.toStored()).rejects.toThrow(/not extractable/);
    });
  });
});
