import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { DemoProvider } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a shared thread through CPPClient (PROTOCOL.md §29)', () => {
  it('is shared by invite and by DID, listed with its members, and lost by a member the owner removes', async () => {
    const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 5 }), auth: 'did-key' });
    cleanups.push(() => server.close());
    const connect = async () => {
      const identity = await DidKeyIdentity.generate();
      const client = new CPPClient({ endpoint: server.url, reconnect: false, identity });
      cleanups.push(() => client.close());
      return { client, did: identity.did };
    };
    const [owner, joiner, named] = await Promise.all([connect(), connect(), connect()]);
    const { threadId } = await owner.client.openThread();

    const { token, invite } = await owner.client.createInvite('writer', { maxUses: 1 });
    expect(invite).toMatchObject({ role: 'writer', uses: 0 });
    expect((await joiner.client.acceptInvite(token)).members).toEqual([{ did: joiner.did, role: 'writer' }]);
    expect((await joiner.client.listThreads()).map((thread) => [thread.threadId, thread.role])).toEqual([
      [threadId, 'writer'],
    ]);
    await owner.client.addMember(named.did, 'reader');
    expect((await named.client.listMembers(threadId)).members).toEqual([
      { did: joiner.did, role: 'writer' },
      { did: named.did, role: 'reader' },
    ]);

    await joiner.client.openThread(threadId);
    const lost = new Promise<string>((resolve) => joiner.client.on('threadDeleted', resolve));
    await owner.client.removeMember(joiner.did);
    expect(await lost).toBe(threadId);
    expect(await owner.client.revokeInvite(invite.inviteId)).toEqual([]);
  });

  it('keeps who has the thread open, with their typing, and tells each change (PROTOCOL.md §29.9)', async () => {
    const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 5 }), auth: 'did-key' });
    cleanups.push(() => server.close());
    const connect = async () => {
      const identity = await DidKeyIdentity.generate();
      const client = new CPPClient({ endpoint: server.url, reconnect: false, identity });
      cleanups.push(() => client.close());
      return { client, did: identity.did };
    };
    const [owner, member] = await Promise.all([connect(), connect()]);
    const { threadId } = await owner.client.openThread();
    await owner.client.addMember(member.did, 'writer');
    const dids = () => owner.client.presence(threadId).map(({ did, typing }) => `${did}${typing ? ' typing' : ''}`);
    const until = (expected: string[]) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (JSON.stringify(dids()) !== JSON.stringify(expected)) return;
          owner.client.off('presence', check);
          resolve();
        };
        owner.client.on('presence', check);
        check();
      });
    const sorted = (...entries: string[]) => entries.sort();
    await until([owner.did]);

    await member.client.openThread(threadId);
    await until(sorted(owner.did, member.did));
    await member.client.setTyping(true, threadId);
    await until(sorted(owner.did, `${member.did} typing`));
    await member.client.closeThread(threadId);
    await until([owner.did]);
  });
});
