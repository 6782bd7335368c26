import { describe, expect, it } from 'vitest';
import { authenticate } from '../auth/support/authenticate.js';
import { TestIdentity } from '../auth/support/did-key-identity.js';
import { chunksReceived, expectError, listThreads, openThread, prompt } from '../support/protocol-steps.js';
import type { LocalInstance } from './local-instances.js';
import { useLocalInstances } from './local-instances.js';
import { type ProxiedInstance, useProxiedInstances } from './proxied-instances.js';

const alice = TestIdentity.generate();
const bob = TestIdentity.generate();

async function connectAs(instance: LocalInstance | ProxiedInstance, identity: TestIdentity) {
  const client = await instance.connect({ did: identity.did });
  await authenticate(client, identity);
  return client;
}

/** docs/PROTOCOL.md §27.4: a removal holds on every server at once. */
describe('a member removed on one server', () => {
  const instances = useLocalInstances();

  it('loses the thread on the others at once: its subscriptions end there with the reason, its frames find nothing', async () => {
    const [first, second] = await instances.start(2, { chunks: ['Held ', 'open'], gated: true }, { auth: 'did-key' });
    const owner = await connectAs(first!, alice);
    const { threadId } = await openThread(owner, { patches: true });
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'writer' });
    await owner.next('CPP_MEMBERS');
    const member = await connectAs(second!, bob);
    await openThread(member, { threadId, patches: true });
    const exchange = await prompt(owner, threadId, 'Stream on the first server.');
    (await first!.model.call(0)).release(1);
    await chunksReceived(member, exchange.assistantNodeId, 1);

    owner.send('CPP_MEMBER_REMOVE', { threadId, did: bob.did });
    expect((await member.next('CPP_THREAD_REVOKED')).payload).toStrictEqual({
      threadId,
      did: bob.did,
      reason: 'removed',
    });
    const mark = member.mark();
    (await first!.model.call(0)).release(1);
    await chunksReceived(owner, exchange.assistantNodeId, 2);
    member.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId }, { id: 'stop' });
    await expectError(member, 'NOT_FOUND', { refId: 'stop', message: `thread ${threadId} does not exist` });
    expect(member.frames.slice(mark).filter((frame) => frame.type === 'CPP_STREAM_CHUNK')).toEqual([]);
  });
});

/** The same on PostgreSQL and Redis, as separate processes share them. */
describe('a member on servers sharing PostgreSQL and Redis', () => {
  const instances = useProxiedInstances();

  it('lists the thread shared with it on one, and loses it there when the owner removes it on the other', async () => {
    const [first, second] = await instances.start(
      2,
      { chunks: ['Rivers ', 'run.'], gated: false },
      { auth: 'did-key' },
    );
    const owner = await connectAs(first!, alice);
    const { threadId } = await openThread(owner, { patches: true });
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'reader' });
    await owner.next('CPP_MEMBERS');
    const member = await connectAs(second!, bob);
    expect((await listThreads(member)).map(({ threadId: id, role }) => [id, role])).toEqual([[threadId, 'reader']]);
    await openThread(member, { threadId, patches: true });

    owner.send('CPP_MEMBER_REMOVE', { threadId, did: bob.did });
    expect((await member.next('CPP_THREAD_REVOKED')).payload).toStrictEqual({
      threadId,
      did: bob.did,
      reason: 'removed',
    });
    member.send('CPP_SYNC_REQUEST', { threadId }, { id: 'after' });
    await expectError(member, 'NOT_FOUND', { refId: 'after', message: `thread ${threadId} does not exist` });
    expect(await listThreads(member)).toEqual([]);
  });
});

/** docs/PROTOCOL.md §29.9: who has the thread open, whichever server each is connected to. */
describe('presence on servers sharing PostgreSQL and Redis', () => {
  const instances = useProxiedInstances();

  it('shows each member to the other across servers, with their typing, and drops them when they leave', async () => {
    const [first, second] = await instances.start(2, { chunks: ['Here.'], gated: false }, { auth: 'did-key' });
    const owner = await connectAs(first!, alice);
    const { threadId } = await openThread(owner, { patches: true, presence: true });
    const present = (client: typeof owner, expected: { did: string; typing: boolean }[]) => {
      const text = JSON.stringify([...expected].sort((a, b) => (a.did < b.did ? -1 : 1)));
      return client.next('CPP_PRESENCE', (frame) => JSON.stringify(frame.payload.present) === text);
    };
    await present(owner, [{ did: alice.did, typing: false }]);
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'writer' });
    await owner.next('CPP_MEMBERS');

    const member = await connectAs(second!, bob);
    await openThread(member, { threadId, patches: true, presence: true });
    const both = [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ];
    await present(member, both);
    await present(owner, both);
    member.send('CPP_TYPING', { threadId, typing: true });
    await present(owner, [
      { did: alice.did, typing: false },
      { did: bob.did, typing: true },
    ]);
    await member.close();
    await present(owner, [{ did: alice.did, typing: false }]);
  });
});

/** docs/PROTOCOL.md §29.10: a share link lives in PostgreSQL, so every instance serves it and drops it at once. */
describe('a read-only share link on servers sharing PostgreSQL and Redis', () => {
  const instances = useProxiedInstances();

  it('made on one is read on the other, and revoked on the first is gone on both', async () => {
    const [first, second] = await instances.start(2, { chunks: ['Shared.'], gated: false }, { auth: 'did-key' });
    const owner = await connectAs(first!, alice);
    const { threadId } = await openThread(owner, { patches: true });
    owner.send('CPP_SHARE_LINK_CREATE', { threadId, scope: 'tree' });
    const { path, link } = (await owner.next('CPP_SHARE_LINK')).payload;
    const read = (instance: ProxiedInstance) => fetch(`http://127.0.0.1:${instance.server.port}${path}`);
    expect((await read(second!)).status).toBe(200);
    owner.send('CPP_SHARE_LINK_REVOKE', { threadId, linkId: link.linkId });
    await owner.next('CPP_SHARE_LINKS');
    expect((await read(second!)).status).toBe(404);
    expect((await read(first!)).status).toBe(404);
  });
});
