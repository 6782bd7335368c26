import { decodeBase64Url } from '@promethea/cpp-protocol';

/**
 * An Ed25519 private key: a WebCrypto key where the platform has Ed25519 (Node, and browsers since 2025: Chrome 137,
 * Firefox 129, Safari 17), else the 32-byte seed, signed with by @noble/curves. That library is loaded only then,
 * so that a page's bundle does without it where the browser can sign.
 */
export type Ed25519PrivateKey = CryptoKey | Uint8Array;

export interface Ed25519KeyPair {
  privateKey: Ed25519PrivateKey;
  publicKey: Uint8Array;
}

const ED25519 = { name: 'Ed25519' };
/** RFC 8410's PKCS #8 wrapping of a 32-byte seed: the one form in which WebCrypto imports an Ed25519 private key. */
const PKCS8_SEED_PREFIX = Uint8Array.of(
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
);

type Noble = typeof import('@noble/curves/ed25519.js');

/** A new key pair from the platform's cryptographic random source; `extractable: false` keeps it in WebCrypto. */
export function generateKeyPair(extractable: boolean): Promise<Ed25519KeyPair> {
  return withFallback(
    async (subtle) => {
      const pair = (await subtle.generateKey(ED25519, extractable, ['sign', 'verify'])) as CryptoKeyPair;
      return { privateKey: pair.privateKey, publicKey: new Uint8Array(await subtle.exportKey('raw', pair.publicKey)) };
    },
    ({ ed25519 }) => seedPair(ed25519.utils.randomSecretKey(), ed25519),
  );
}

/** The key pair of a 32-byte seed. */
export function importSeed(seed: Uint8Array, extractable: boolean): Promise<Ed25519KeyPair> {
  return withFallback(
    async (subtle) => {
      const pkcs8 = new Uint8Array(PKCS8_SEED_PREFIX.length + seed.length);
      pkcs8.set(PKCS8_SEED_PREFIX);
      pkcs8.set(seed, PKCS8_SEED_PREFIX.length);
      // WebCrypto derives the public key only into an exported JWK (its `x`), so the key is read once extractable.
      const readable = await subtle.importKey('pkcs8', pkcs8, ED25519, true, ['sign']);
      const publicKey = decodeBase64Url((await subtle.exportKey('jwk', readable)).x ?? '')!;
      return {
        privateKey: extractable ? readable : await subtle.importKey('pkcs8', pkcs8, ED25519, false, ['sign']),
        publicKey,
      };
    },
    ({ ed25519 }) => seedPair(seed, ed25519),
  );
}

export async function sign(privateKey: Ed25519PrivateKey, message: Uint8Array): Promise<Uint8Array> {
  if (privateKey instanceof Uint8Array) return (await loadNoble()).ed25519.sign(message, privateKey);
  return new Uint8Array(await crypto.subtle.sign(ED25519, privateKey, message as Uint8Array<ArrayBuffer>));
}

/** The seed of an extractable key. */
export async function exportSeed(privateKey: Ed25519PrivateKey): Promise<Uint8Array> {
  if (privateKey instanceof Uint8Array) return privateKey;
  return decodeBase64Url((await crypto.subtle.exportKey('jwk', privateKey)).d ?? '')!;
}

function seedPair(seed: Uint8Array, ed25519: Noble['ed25519']): Ed25519KeyPair {
  return { privateKey: Uint8Array.from(seed), publicKey: ed25519.getPublicKey(seed) };
}

function loadNoble(): Promise<Noble> {
  return import('@noble/curves/ed25519.js');
}

/**
 * WebCrypto's Ed25519 where it is there; @noble/curves where the browser has no WebCrypto (a page served over plain
 * http from a host other than localhost) or no Ed25519 in it (NotSupportedError).
 */
async function withFallback<Result>(
  webCrypto: (subtle: SubtleCrypto) => Promise<Result>,
  noble: (library: Noble) => Result,
): Promise<Result> {
  const subtle = globalThis.crypto?.subtle as SubtleCrypto | undefined;
  if (subtle) {
    try {
      return await webCrypto(subtle);
    } catch (error) {
      if ((error as { name?: unknown } | null)?.name !== 'NotSupportedError') throw error;
    }
  }
  return noble(await loadNoble());
}
