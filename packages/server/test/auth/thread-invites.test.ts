import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { expectError, listThreads, openThread } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const fixture = useServer();
const alice = TestIdentity.generate();
const bob = TestIdentity.generate();
const carol = TestIdentity.generate();

async function invite(owner: RawClient, threadId: string, fields: Record<string, unknown> = {}) {
  owner.send('CPP_INVITE_CREATE', { threadId, role: 'writer', ...fields });
  return (await owner.next('CPP_INVITE')).payload;
}

async function accept(client: RawClient, token: string, id = 'accept') {
  client.send('CPP_INVITE_ACCEPT', { token }, { id });
}

describe('an invite to a shared thread', () => {
  it('makes whoever proves an identity and presents its token a member, as often as it may be used', async () => {
    const store = new MemoryStore();
    await fixture.start({ auth: 'did-key', store });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    const created = await invite(owner, threadId, { maxUses: 1 });
    expect(created.token).toMatch(/^cppinv_[A-Za-z0-9_-]{43}$/);
    expect(created.invite).toMatchObject({ role: 'writer', maxUses: 1, uses: 0 });
    // The store holds the token's SHA-256, never the token.
    const stored = await store.invites(threadId, 0);
    expect(stored.map((record) => record.tokenHash)).toStrictEqual([hash(created.token)]);
    expect(JSON.stringify(stored)).not.toContain(created.token);

    const joiner = await connectAs(fixture, bob);
    await accept(joiner, created.token);
    expect((await joiner.next('CPP_MEMBERS')).payload).toStrictEqual({
      threadId,
      ownerDid: alice.did,
      members: [{ did: bob.did, role: 'writer' }],
    });
    expect((await listThreads(joiner)).find((thread) => thread.threadId === threadId)).toMatchObject({
      role: 'writer',
    });

    const late = await connectAs(fixture, carol);
    await accept(late, created.token, 'late');
    const usedUp = await expectError(late, 'NOT_FOUND', { refId: 'late' });
    await accept(late, `cppinv_${'B'.repeat(43)}`, 'unknown');
    const unknown = await expectError(late, 'NOT_FOUND', { refId: 'unknown' });
    expect(usedUp.message).toBe(unknown.message);
  });

  it('is listed without its token to its owner only, revoked, and then joins nobody', async () => {
    await fixture.start({ auth: 'did-key' });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    const created = await invite(owner, threadId, { role: 'reader', maxUses: 3 });
    owner.send('CPP_INVITE_LIST', { threadId });
    const listed = (await owner.next('CPP_INVITES')).payload;
    expect(listed).toStrictEqual({ threadId, invites: [created.invite] });
    expect(JSON.stringify(listed)).not.toContain(created.token);

    const member = await connectAs(fixture, bob);
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'reader' });
    await owner.next('CPP_MEMBERS');
    member.send('CPP_INVITE_CREATE', { threadId, role: 'writer' }, { id: 'not-owner' });
    await expectError(member, 'FORBIDDEN', { refId: 'not-owner' });

    owner.send('CPP_INVITE_REVOKE', { threadId, inviteId: created.invite.inviteId });
    expect((await owner.next('CPP_INVITES')).payload.invites).toEqual([]);
    const stranger = await connectAs(fixture, carol);
    await accept(stranger, created.token, 'revoked');
    await expectError(stranger, 'NOT_FOUND', { refId: 'revoked' });
  });

  it('expires', async () => {
    await fixture.start({ auth: 'did-key' });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    const created = await invite(owner, threadId, { expiresInMs: 1 });
    expect(created.invite.expiresAt).toBeLessThanOrEqual(Date.now() + 1);
    // The server's clock, not the test's patience, moves past the expiry: only Date is faked, so sockets run as ever.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(created.invite.expiresAt + 1);
      const joiner = await connectAs(fixture, bob);
      await accept(joiner, created.token, 'expired');
      await expectError(joiner, 'NOT_FOUND', { refId: 'expired' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('is limited per thread', async () => {
    await fixture.start({ auth: 'did-key', limits: { maxInvitesPerThread: 1 } });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    await invite(owner, threadId);
    owner.send('CPP_INVITE_CREATE', { threadId, role: 'reader' }, { id: 'second' });
    await expectError(owner, 'RATE_LIMITED', { refId: 'second' });
  });

  it('is not used up by a join the thread has no room for', async () => {
    await fixture.start({ auth: 'did-key', limits: { maxMembersPerThread: 1 } });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'reader' });
    await owner.next('CPP_MEMBERS');
    const { token, invite: made } = await invite(owner, threadId);
    const late = await connectAs(fixture, carol);
    await accept(late, token, 'full');
    await expectError(late, 'RATE_LIMITED', { refId: 'full' });
    owner.send('CPP_INVITE_LIST', { threadId });
    expect((await owner.next('CPP_INVITES')).payload.invites).toEqual([made]);

    owner.send('CPP_MEMBER_REMOVE', { threadId, did: bob.did });
    await owner.next('CPP_MEMBERS');
    await accept(late, token, 'room');
    expect((await late.next('CPP_MEMBERS')).payload.members).toEqual([{ did: carol.did, role: 'writer' }]);
  });
});

function hash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
