import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { DemoProvider } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { CONFIG_HOME, ChatProcess } from '../support/chat-process.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('cpp-chat', () => {
  it('proves the identity kept in its config directory, created 0600 on first use, to a did-key server', async () => {
    const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 5 }), auth: 'did-key' });
    cleanups.push(() => server.close());
    const chat = new ChatProcess([server.url, '--thread', 'thread_chat_identity']);
    cleanups.push(() => chat.kill());
    await chat.stdout.until(/\(0 messages\)[^\n]*\n/);
    chat.type('/quit');
    expect(await chat.exited).toBe(0);

    const file = join(CONFIG_HOME, 'cpp', 'identity.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const identity = await DidKeyIdentity.fromStored(JSON.parse(readFileSync(file, 'utf8')));
    const owner = new CPPClient({ endpoint: server.url, identity, reconnect: false });
    cleanups.push(() => owner.close());
    expect((await owner.listThreads()).map((thread) => thread.threadId)).toEqual(['thread_chat_identity']);
  });

  it('will not both claim a DID and prove an identity', async () => {
    const chat = new ChatProcess(['ws://127.0.0.1:1', '--did', 'did:key:z6MkA', '--identity', 'x.json']);
    expect(await chat.exited).toBe(2);
    expect(chat.stderr.text).toMatch(/--identity FILE \| --did DID/);
  });
});
