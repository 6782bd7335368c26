import { newMessageId, newThreadId, type ServerFrame } from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  expectError,
  listThreads,
  openThread,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';

const fixture = useServer();
const alice = TestIdentity.generate();
const bob = TestIdentity.generate();
const carol = TestIdentity.generate();

let owner: RawClient;
let member: RawClient;
let threadId: string;

async function members(client: RawClient, type: string, payload: Record<string, unknown>) {
  client.send(type, { threadId, ...payload });
  return (await client.next('CPP_MEMBERS')).payload;
}

/** The frames about the thread a client received after `mark`. */
function threadFramesSince(client: RawClient, mark: number): ServerFrame[] {
  return client.frames
    .slice(mark)
    .filter((frame) => 'payload' in frame && (frame.payload as { threadId?: string }).threadId === threadId);
}

describe('a shared thread, its identities proven', () => {
  beforeEach(async () => {
    await fixture.start({ auth: 'did-key' });
    owner = await connectAs(fixture, alice);
    member = await connectAs(fixture, bob);
    threadId = (await openThread(owner, { patches: true })).threadId;
  });

  it("lists its members for everyone in it, and among a member's threads with the member's role", async () => {
    expect(await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'reader' })).toStrictEqual({
      threadId,
      ownerDid: alice.did,
      members: [{ did: bob.did, role: 'reader' }],
    });
    expect(await members(member, 'CPP_MEMBER_LIST', {})).toMatchObject({ members: [{ did: bob.did }] });
    const shared = (await listThreads(member)).find((thread) => thread.threadId === threadId);
    expect(shared).toMatchObject({ threadId, role: 'reader' });
    expect((await listThreads(owner)).find((thread) => thread.threadId === threadId)).not.toHaveProperty('role');
  });

  it('lets a reader watch the tree live, with who wrote each prompt, and change nothing', async () => {
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'reader' });
    await openThread(member, { threadId, patches: true });
    const exchange = await prompt(owner, threadId, 'Explain spiking neural networks.');
    const seen = await member.next(
      'CPP_GRAPH_PATCH',
      (frame) => frame.payload.nodes[exchange.userNodeId] !== undefined,
    );
    expect(seen.payload.nodes[exchange.userNodeId]).toMatchObject({ authorDid: alice.did });
    await chunksReceived(member, exchange.assistantNodeId, 1);

    const refused: [string, Record<string, unknown>][] = [
      [
        'CPP_PIVOT_INIT',
        {
          activeThreadId: threadId,
          interruptedNodeId: exchange.assistantNodeId,
          userPrompt: 'No.',
          newBranchNodeId: newMessageId(),
        },
      ],
      ['CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId }],
      ['CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: exchange.userNodeId }],
      ['CPP_THREAD_RENAME', { threadId, title: 'Mine' }],
      ['CPP_THREAD_DELETE', { threadId }],
      ['CPP_MEMBER_ADD', { threadId, did: carol.did, role: 'writer' }],
    ];
    for (const [type, payload] of refused) {
      member.send(type, payload, { id: type });
      await expectError(member, 'FORBIDDEN', { refId: type, refType: type });
    }
    await completion(owner, threadId, exchange.assistantNodeId);
    expect((await requestSync(owner, threadId)).title).toBe('Explain spiking neural networks.');
  });

  it("lets a writer prompt, recording the writer as the prompt's author, but not rename, delete or share", async () => {
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'writer' });
    await openThread(member, { threadId, patches: true });
    const exchange = await prompt(member, threadId, 'Hello from Bob.');
    const seen = await owner.next('CPP_GRAPH_PATCH', (frame) => frame.payload.nodes[exchange.userNodeId] !== undefined);
    expect(seen.payload.nodes[exchange.userNodeId]).toMatchObject({ authorDid: bob.did });
    await completion(member, threadId, exchange.assistantNodeId);

    for (const [type, payload] of [
      ['CPP_THREAD_RENAME', { threadId, title: 'Mine' }],
      ['CPP_THREAD_DELETE', { threadId }],
      ['CPP_MEMBER_REMOVE', { threadId, did: carol.did }],
    ] as const) {
      member.send(type, payload, { id: type });
      await expectError(member, 'FORBIDDEN', { refId: type });
    }
  });

  it('is, to anyone else, a thread that does not exist, word for word', async () => {
    const stranger = await connectAs(fixture, carol);
    stranger.send('CPP_SYNC_REQUEST', { threadId }, { id: 'theirs' });
    const theirs = await expectError(stranger, 'NOT_FOUND', { refId: 'theirs' });
    const unknown = newThreadId();
    stranger.send('CPP_SYNC_REQUEST', { threadId: unknown }, { id: 'none' });
    const none = await expectError(stranger, 'NOT_FOUND', { refId: 'none' });
    expect(theirs.message.replace(threadId, unknown)).toBe(none.message);
    stranger.send('CPP_MEMBER_LIST', { threadId }, { id: 'list' });
    await expectError(stranger, 'NOT_FOUND', { refId: 'list' });
  });

  it("ends a removed member's subscriptions on every connection at once, with the reason", async () => {
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'writer' });
    const secondTab = await connectAs(fixture, bob);
    await openThread(member, { threadId, patches: true });
    await openThread(secondTab, { threadId, patches: true });
    const exchange = await prompt(owner, threadId, 'A long answer.');
    await chunksReceived(member, exchange.assistantNodeId, 1);

    expect(await members(owner, 'CPP_MEMBER_REMOVE', { did: bob.did })).toMatchObject({ members: [] });
    for (const tab of [member, secondTab]) {
      const revoked = await tab.next('CPP_THREAD_REVOKED');
      expect(revoked.payload).toStrictEqual({ threadId, did: bob.did, reason: 'removed' });
    }
    const marks = [member.mark(), secondTab.mark()];
    await completion(owner, threadId, exchange.assistantNodeId);
    await prompt(owner, threadId, 'After Bob left.');
    expect(threadFramesSince(member, marks[0]!)).toEqual([]);
    expect(threadFramesSince(secondTab, marks[1]!)).toEqual([]);

    member.send('CPP_SYNC_REQUEST', { threadId }, { id: 'after' });
    await expectError(member, 'NOT_FOUND', { refId: 'after', message: `thread ${threadId} does not exist` });
    expect((await listThreads(member)).map((thread) => thread.threadId)).not.toContain(threadId);
  });

  it('lets a member leave, answered with the revocation; the owner cannot leave', async () => {
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'reader' });
    member.send('CPP_MEMBER_REMOVE', { threadId, did: bob.did });
    expect((await member.next('CPP_THREAD_REVOKED')).payload).toStrictEqual({ threadId, did: bob.did, reason: 'left' });
    expect(await members(owner, 'CPP_MEMBER_LIST', {})).toMatchObject({ members: [] });
    owner.send('CPP_MEMBER_REMOVE', { threadId, did: alice.did }, { id: 'leave' });
    await expectError(owner, 'INVALID_FRAME', { refId: 'leave' });
  });

  it("tells every member, subscribed or listening, of the thread's deletion", async () => {
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'reader' });
    const listening = await connectAs(fixture, bob);
    listening.send('CPP_THREAD_LIST', { subscribe: true });
    await listening.next('CPP_THREADS');
    await openThread(member, { threadId });
    owner.send('CPP_THREAD_DELETE', { threadId });
    for (const client of [member, listening])
      expect((await client.next('CPP_THREAD_DELETED')).payload).toStrictEqual({ threadId });
  });
});

describe('the members a thread may have', () => {
  it('are limited: a member already there changes role, one more is RATE_LIMITED', async () => {
    await fixture.start({ auth: 'did-key', limits: { maxMembersPerThread: 1 } });
    owner = await connectAs(fixture, alice);
    threadId = (await openThread(owner)).threadId;
    await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'reader' });
    expect(await members(owner, 'CPP_MEMBER_ADD', { did: bob.did, role: 'writer' })).toMatchObject({
      members: [{ did: bob.did, role: 'writer' }],
    });
    owner.send('CPP_MEMBER_ADD', { threadId, did: carol.did, role: 'reader' }, { id: 'full' });
    await expectError(owner, 'RATE_LIMITED', { refId: 'full' });
  });
});

describe('members, with claimed identities', () => {
  it('are refused: a thread id is the capability there', async () => {
    const client = await fixture.connect({ did: alice.did.replace('z6Mk', 'zClaimed') });
    const opened = await openThread(client);
    client.send('CPP_MEMBER_ADD', { threadId: opened.threadId, did: bob.did, role: 'reader' }, { id: 'add' });
    await expectError(client, 'FORBIDDEN', { refId: 'add' });
  });
});
