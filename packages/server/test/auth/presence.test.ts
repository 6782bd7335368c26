import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Subscriber } from '../../src/engine/subscriber.js';
import type { ThreadLink } from '../../src/engine/thread-link.js';
import { PRESENCE_EXPIRY_MS, ThreadPresence, TYPING_TIMEOUT_MS } from '../../src/engine/thread-presence.js';
import { expectError, openThread } from '../support/protocol-steps.js';
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

type Present = { did: string; typing: boolean }[];

/** The next CPP_PRESENCE of the thread that lists exactly `present` (in any order given: the server sorts by DID). */
async function presence(client: RawClient, present: Present): Promise<void> {
  const expected = JSON.stringify([...present].sort((a, b) => (a.did < b.did ? -1 : 1)));
  await client.next(
    'CPP_PRESENCE',
    (frame) => frame.payload.threadId === threadId && JSON.stringify(frame.payload.present) === expected,
  );
}

async function share(did: string, role: 'reader' | 'writer') {
  owner.send('CPP_MEMBER_ADD', { threadId, did, role });
  await owner.next('CPP_MEMBERS');
}

describe('presence in a shared thread', () => {
  beforeEach(async () => {
    await fixture.start({ auth: 'did-key' });
    owner = await connectAs(fixture, alice);
    member = await connectAs(fixture, bob);
    threadId = (await openThread(owner, { patches: true, presence: true })).threadId;
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('comes right after the sync, and changes as members open and leave the thread', async () => {
    await presence(owner, [{ did: alice.did, typing: false }]);
    const types = owner.frames.map((frame) => frame.type);
    expect(types.indexOf('CPP_PRESENCE')).toBe(types.indexOf('CPP_SYNC_GRAPH') + 1);
    await share(bob.did, 'reader');

    await openThread(member, { threadId, presence: true });
    const both = [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ];
    await presence(member, both);
    await presence(owner, both);

    // A second tab of the same identity changes nothing; its close changes nothing while the first is open.
    const tab = await connectAs(fixture, bob);
    await openThread(tab, { threadId });
    tab.send('CPP_THREAD_CLOSE', { threadId });
    member.send('CPP_THREAD_CLOSE', { threadId });
    await presence(owner, [{ did: alice.did, typing: false }]);
    expect(owner.frames.filter((frame) => frame.type === 'CPP_PRESENCE')).toHaveLength(3);
  });

  it('is not sent to a connection that did not ask for it, which is present all the same', async () => {
    await share(bob.did, 'writer');
    await openThread(member, { threadId });
    await presence(owner, [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ]);
    member.close();
    await presence(owner, [{ did: alice.did, typing: false }]);
    expect(member.frames.some((frame) => frame.type === 'CPP_PRESENCE')).toBe(false);
  });

  it('says who types, until they stop or their typing runs out; a reader may not type', async () => {
    await share(bob.did, 'writer');
    await share(carol.did, 'reader');
    await openThread(member, { threadId, presence: true });
    member.send('CPP_TYPING', { threadId, typing: true });
    const typing = [
      { did: alice.did, typing: false },
      { did: bob.did, typing: true },
    ];
    await presence(owner, typing);
    member.send('CPP_TYPING', { threadId, typing: false });
    await presence(owner, [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ]);

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    member.send('CPP_TYPING', { threadId, typing: true });
    await presence(owner, typing);
    vi.advanceTimersByTime(TYPING_TIMEOUT_MS);
    vi.useRealTimers();
    await presence(owner, [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ]);

    const reader = await connectAs(fixture, carol);
    reader.send('CPP_TYPING', { threadId, typing: true }, { id: 'typing' });
    await expectError(reader, 'FORBIDDEN', { refId: 'typing' });
  });

  it('loses a removed member at once', async () => {
    await share(bob.did, 'reader');
    await openThread(member, { threadId });
    await presence(owner, [
      { did: alice.did, typing: false },
      { did: bob.did, typing: false },
    ]);
    await share(bob.did, 'reader');
    owner.send('CPP_MEMBER_REMOVE', { threadId, did: bob.did });
    await presence(owner, [{ did: alice.did, typing: false }]);
  });
});

describe("another server's presence", () => {
  it('is forgotten once that server stops telling it (it died), while this one keeps telling its own', () => {
    const told: unknown[] = [];
    const link = { presence: (present: unknown, ask: boolean) => told.push({ present, ask }) } as unknown as ThreadLink;
    const presence = new ThreadPresence('thread_presence', link);
    const frames: string[] = [];
    const watcher: Subscriber = { identity: { did: alice.did, verified: true }, send: (text) => frames.push(text) };
    presence.joined(watcher);
    presence.watch(watcher);
    expect(told).toEqual([{ present: [{ did: alice.did, typing: false }], ask: true }]);
    presence.remote('instance_b', [{ did: bob.did, typing: false }], false, 1_000);
    const last = () => JSON.parse(frames.at(-1)!).payload.present.map(({ did }: { did: string }) => did);
    expect(last()).toEqual([alice.did, bob.did].sort());

    presence.tick(1_000 + PRESENCE_EXPIRY_MS);
    expect(last()).toEqual([alice.did, bob.did].sort());
    presence.tick(1_001 + PRESENCE_EXPIRY_MS);
    expect(last()).toEqual([alice.did]);
    expect(told.at(-1)).toEqual({ present: [{ did: alice.did, typing: false }], ask: false });
    presence.close();
  });
});
