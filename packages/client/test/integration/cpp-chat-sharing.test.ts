import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { DemoProvider } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { ChatProcess } from '../support/chat-process.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('cpp-chat sharing a thread (PROTOCOL.md §29)', () => {
  it('/share makes an invite another cpp-chat /joins, /share DID adds a member, /members lists them, /unshare removes', async () => {
    const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 5 }), auth: 'did-key' });
    cleanups.push(() => server.close());
    const folder = mkdtempSync(join(tmpdir(), 'cpp-chat-sharing-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const owner = new ChatProcess([
      server.url,
      '--identity',
      join(folder, 'owner.json'),
      '--thread',
      'thread_shared_chat',
    ]);
    cleanups.push(() => owner.kill());
    await owner.stdout.until(/\(0 messages\)[^\n]*\n/);

    owner.type('/share writer');
    const [, token] = (await owner.stdout.until(/\/join (cppinv_[A-Za-z0-9_-]{43})/)).match(/\/join (cppinv_\S+)/)!;
    const joiner = new ChatProcess([server.url, '--identity', join(folder, 'joiner.json')]);
    cleanups.push(() => joiner.kill());
    await joiner.stdout.until(/\(0 messages\)[^\n]*\n/);
    joiner.type(`/join ${token}`);
    await joiner.stdout.until(/thread thread_shared_chat \(0 messages\)/);

    const reader = await DidKeyIdentity.generate();
    owner.type(`/share ${reader.did}`);
    await owner.stdout.until(new RegExp(`reader  ${reader.did}`));
    let mark = owner.stdout.text.length;
    owner.type('/members');
    const members = await owner.stdout.until(
      /owner {3}did:key:\S+\nwriter {2}did:key:\S+\nreader {2}did:key:\S+\n/,
      mark,
    );
    expect(members).toContain(reader.did);

    const client = new CPPClient({ endpoint: server.url, identity: reader, reconnect: false });
    cleanups.push(() => client.close());
    expect((await client.listThreads()).map((thread) => [thread.threadId, thread.role])).toEqual([
      ['thread_shared_chat', 'reader'],
    ]);
    mark = owner.stdout.text.length;
    owner.type(`/unshare ${reader.did}`);
    expect(await owner.stdout.until(/owner {3}did:key:\S+\nwriter {2}did:key:\S+\n/, mark)).not.toContain(reader.did);
    expect(await client.listThreads()).toEqual([]);
  });

  it('/share link makes a read-only link anyone reads over HTTP, /share links lists it, /share revoke takes it back', async () => {
    const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 5 }), auth: 'did-key' });
    cleanups.push(() => server.close());
    const folder = mkdtempSync(join(tmpdir(), 'cpp-chat-links-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const owner = new ChatProcess([server.url, '--identity', join(folder, 'owner.json'), '--thread', 'thread_linked']);
    cleanups.push(() => owner.kill());
    await owner.stdout.until(/\(0 messages\)[^\n]*\n/);
    owner.type('A message to share');
    await owner.stdout.until(/demo model/);

    owner.type('/share link');
    const made = await owner.stdout.until(/read-only link \(branch, shr_\S+\): \S+/);
    const [, linkId, url] = made.match(/read-only link \(branch, (shr_[^)]+)\): (\S+)/)!;
    const page = await fetch(url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('A message to share');
    let mark = owner.stdout.text.length;
    owner.type('/share links');
    await owner.stdout.until(new RegExp(`${linkId}  branch`), mark);
    mark = owner.stdout.text.length;
    owner.type(`/share revoke ${linkId}`);
    await owner.stdout.until(/\(no read-only links\)/, mark);
    expect((await fetch(url!)).status).toBe(404);
  });
});
