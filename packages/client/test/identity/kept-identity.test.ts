import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DidKeyIdentity, fileIdentity } from '@promethea/cpp-client';
import { afterAll, describe, expect, it } from 'vitest';
import { browserIdentity } from '../../src/browser.js';

const folder = mkdtempSync(join(tmpdir(), 'cpp-identity-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('fileIdentity (Node)', () => {
  it('creates the identity in a file only its owner may read, and returns the same one after', async () => {
    const path = join(folder, 'nested', 'identity.json');
    const created = await fileIdentity(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(created.toStored());
    expect((await fileIdentity(path)).did).toBe(created.did);
  });

  it('gives every process racing to create it the same identity', async () => {
    const path = join(folder, 'raced.json');
    const identities = await Promise.all([fileIdentity(path), fileIdentity(path), fileIdentity(path)]);
    expect(new Set(identities.map((identity) => identity.did)).size).toBe(1);
  });

  it('refuses a file that others may read', async () => {
    const path = join(folder, 'open.json');
    writeFileSync(path, JSON.stringify(DidKeyIdentity.generate().toStored()));
    chmodSync(path, 0o644);
    await expect(fileIdentity(path)).rejects.toThrow(/may be read by others.*chmod 600/);
  });
});

describe('browserIdentity', () => {
  /** localStorage as a browser has it: strings by key. */
  const storage = () => {
    const items = new Map<string, string>();
    return { getItem: (key: string) => items.get(key) ?? null, setItem: (key: string, value: string) => void items.set(key, value), items };
  };

  it('is made once and kept in the storage, so that every tab and visit is the same DID', () => {
    const kept = storage();
    const identity = browserIdentity(kept);
    expect(browserIdentity(kept).did).toBe(identity.did);
    expect(JSON.parse(kept.items.get('cpp.identity')!)).toEqual(identity.toStored());
  });

  it('replaces a kept value that is not an identity', () => {
    const kept = storage();
    kept.setItem('cpp.identity', 'did:key:z6MkOldClaim');
    expect(browserIdentity(kept).did).toMatch(/^did:key:z6Mk/);
    expect(JSON.parse(kept.items.get('cpp.identity')!).did).toMatch(/^did:key:z6Mk/);
  });
});
