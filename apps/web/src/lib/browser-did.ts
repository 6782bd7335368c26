const STORAGE_KEY = 'cpp.did';
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** An Ed25519 did:key is `z6Mk` and 44 more base58btc characters; the claim takes the same shape. */
const ED25519_DID_KEY_PREFIX = 'did:key:z6Mk';
const RANDOM_CHARACTERS = 44;

/**
 * The identity this browser claims, made once and kept in localStorage so that every tab and every visit sees the
 * same threads. It is only shaped like a did:key: no key stands behind it until identities are proven.
 */
export function browserDid(storage: Storage): string {
  const kept = storage.getItem(STORAGE_KEY);
  if (kept !== null && kept.startsWith(ED25519_DID_KEY_PREFIX)) return kept;
  const did = ED25519_DID_KEY_PREFIX + randomBase58(RANDOM_CHARACTERS);
  storage.setItem(STORAGE_KEY, did);
  return did;
}

function randomBase58(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length))) {
      // Bytes above the largest multiple of 58 are dropped so that every character is equally likely.
      if (byte < 232 && text.length < length) text += BASE58_ALPHABET[byte % 58];
    }
  }
  return text;
}
