import { DidKeyIdentity, type StoredIdentity } from './did-key-identity.js';

const STORAGE_KEY = 'cpp.identity';

/**
 * This browser's identity, made once and kept in `storage` (localStorage by default), so that every tab and every
 * visit of the site is the same DID. Kept there, the private key is readable by any script of the site's origin:
 * keep the site free of third-party scripts. A kept value that is not a valid identity is replaced.
 */
export function browserIdentity(storage: Pick<Storage, 'getItem' | 'setItem'> = globalThis.localStorage, key = STORAGE_KEY): DidKeyIdentity {
  const kept = storage.getItem(key);
  if (kept !== null) {
    try {
      return DidKeyIdentity.fromStored(JSON.parse(kept) as StoredIdentity);
    } catch {
      // Not an identity this SDK wrote (or a damaged one): a new identity replaces it below.
    }
  }
  const identity = DidKeyIdentity.generate();
  storage.setItem(key, JSON.stringify(identity.toStored()));
  return identity;
}
