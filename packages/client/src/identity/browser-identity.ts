import { decodeBase64Url } from '@promethea/cpp-protocol';
import { DidKeyIdentity, type StoredIdentity } from './did-key-identity.js';
import { generateKeyPair, importSeed, type Ed25519KeyPair } from './ed25519-key.js';

export interface BrowserIdentityOptions {
  /** The IndexedDB database the identity is kept in (one identity per database). Default `cpp`. */
  database?: string;
  /** Default: the page's `indexedDB`. */
  indexedDB?: IDBFactory;
  /**
   * Where earlier versions kept the identity, under the key `cpp.identity` (default: the page's `localStorage`). An
   * identity found there is moved into IndexedDB, so that its DID and threads stay the user's, and removed there.
   */
  legacyStorage?: Pick<Storage, 'getItem' | 'removeItem'>;
}

const STORE = 'identity';
const RECORD = 'default';
const LEGACY_KEY = 'cpp.identity';

/**
 * This browser's identity, made once and kept in IndexedDB, so that every tab and every visit of the site is the same
 * DID. Where the browser has Ed25519 in WebCrypto, what is kept is a non-extractable CryptoKey: scripts of the site
 * can sign with it while the page is open, but no script can read the key out, nor send it elsewhere. Where it has
 * not, the key is kept as bytes, which any script of the origin can read (README, "Identity"). Tabs opening the
 * site at once for the first time all get the identity the first of them stored.
 */
export async function browserIdentity(options: BrowserIdentityOptions = {}): Promise<DidKeyIdentity> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  if (!factory)
    throw new TypeError(
      'this platform has no IndexedDB to keep an identity in: keep a DidKeyIdentity yourself (in Node, fileIdentity)',
    );
  const database = await request(factory.open(options.database ?? 'cpp'), (opening) => {
    opening.onupgradeneeded = () => opening.result.createObjectStore(STORE);
  });
  try {
    const kept = await request<Ed25519KeyPair | undefined>(database.transaction(STORE).objectStore(STORE).get(RECORD));
    if (kept) return DidKeyIdentity.of(kept, false);
    const legacy = options.legacyStorage ?? pageStorage();
    const pair = (await legacyPair(legacy)) ?? (await generateKeyPair(false));
    const stored = await keepFirst(database, pair);
    legacy?.removeItem(LEGACY_KEY);
    return DidKeyIdentity.of(stored, false);
  } finally {
    database.close();
  }
}

/** Stores `pair` unless another tab stored one first, in one transaction; resolves with the stored pair once committed. */
function keepFirst(database: IDBDatabase, pair: Ed25519KeyPair): Promise<Ed25519KeyPair> {
  return new Promise((resolve, reject) => {
    const transaction = database.transaction(STORE, 'readwrite');
    const store = transaction.objectStore(STORE);
    let kept = pair;
    const existing = store.get(RECORD);
    existing.onsuccess = () => {
      if (existing.result) kept = existing.result as Ed25519KeyPair;
      else store.add(pair, RECORD);
    };
    transaction.oncomplete = () => resolve(kept);
    transaction.onerror = transaction.onabort = () =>
      reject(transaction.error ?? new Error('the identity could not be kept in IndexedDB'));
  });
}

/** The key pair of an identity an earlier version kept in localStorage, made non-extractable; none if it is not one. */
async function legacyPair(storage: Pick<Storage, 'getItem'> | undefined): Promise<Ed25519KeyPair | undefined> {
  try {
    const stored = JSON.parse(storage?.getItem(LEGACY_KEY) ?? 'null') as StoredIdentity | null;
    const seed = stored && decodeBase64Url(stored.privateKey);
    if (seed?.length !== 32) return undefined;
    const pair = await importSeed(seed, false);
    return DidKeyIdentity.of(pair, false).did === stored!.did ? pair : undefined;
  } catch {
    return undefined; // not an identity this SDK wrote: a new one is made
  }
}

/** The page's localStorage; reading it throws in a sandboxed frame, which has none to move an identity from. */
function pageStorage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

function request<Result>(
  pending: IDBRequest<Result> | IDBOpenDBRequest,
  prepare?: (request: IDBOpenDBRequest) => void,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    prepare?.(pending as IDBOpenDBRequest);
    pending.onsuccess = () => resolve(pending.result as Result);
    pending.onerror = () => reject(pending.error);
  });
}
