import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(await created.toStored());
    expect((await fileIdentity(path)).did).toBe(created.did);
  });

  it('gives every process racing to create it the same identity, and leaves no other file', async () => {
    const path = join(folder, 'raced', 'identity.json');
    const identities = await Promise.all(Array.from({ length: 12 }, () => fileIdentity(path)));
    expect(new Set(identities.map((identity) => identity.did)).size).toBe(1);
    expect(readdirSync(dirname(path))).toEqual(['identity.json']);
  });

  it('refuses a file that others may read', async () => {
    const path = join(folder, 'open.json');
    writeFileSync(path, JSON.stringify(await (await DidKeyIdentity.generate({ extractable: true })).toStored()));
    chmodSync(path, 0o644);
    await expect(fileIdentity(path)).rejects.toThrow(/may be read by others.*chmod 600/);
  });
});

describe('fileIdentity (Node), refusing a file that holds no identity', () => {
  it.each([
    ['empty, as a crash can leave it', '', /it is empty/],
    ['not JSON', '{"did": "did:key:z6Mk', /JSON/],
    ['of another shape', '{"did": 1}', /identity\.json does not hold an identity \(/],
  ])('says which file, what is wrong and what to do when it is %s', async (_case, content, problem) => {
    const path = join(mkdtempSync(join(folder, 'broken-')), 'identity.json');
    writeFileSync(path, content, { mode: 0o600 });
    const error = await fileIdentity(path).then(
      () => undefined,
      (thrown: Error) => thrown,
    );
    expect(error?.message).toMatch(problem);
    expect(error?.message).toContain(`${path} does not hold an identity`);
    expect(error?.message).toMatch(/move it away to make a new identity/);
    // The broken file is the person's to decide about: it is left as it was.
    expect(readFileSync(path, 'utf8')).toBe(content);
  });
});

describe('browserIdentity outside a browser', () => {
  it('says that it needs IndexedDB', async () => {
    await expect(browserIdentity()).rejects.toThrow(/no IndexedDB to keep an identity in/);
  });
});
