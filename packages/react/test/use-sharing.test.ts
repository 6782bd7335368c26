// @vitest-environment happy-dom
import { act, renderHook, waitFor } from './support/testing-library.js';
import { DidKeyIdentity } from '@promethea/cpp-client';
import { describe, expect, it } from 'vitest';
import { useCPP, useInvites, useMembers, usePresence, useShareLinks } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

/** A component's view of one thread's sharing, as `identity`. */
function renderSharing(endpoint: string, identity: DidKeyIdentity) {
  return renderHook(
    ({ threadId }: { threadId: string | undefined }) => {
      const cpp = useCPP({ endpoint, identity });
      return {
        cpp,
        members: useMembers(cpp.client, threadId),
        invites: useInvites(cpp.client, threadId),
        presence: usePresence(cpp.client, threadId),
        links: useShareLinks(cpp.client, threadId),
      };
    },
    { initialProps: { threadId: undefined as string | undefined } },
  );
}

describe('useMembers, useInvites, useShareLinks and usePresence', () => {
  it("list and change a thread's members, invites and share links, and show who has it open as that changes", async () => {
    const endpoint = endpointOf(await startDemoServer({ auth: 'did-key' }));
    const [alice, bob] = await Promise.all([DidKeyIdentity.generate(), DidKeyIdentity.generate()]);
    const owner = renderSharing(endpoint, alice);
    await waitFor(() => expect(owner.result.current.cpp.client?.status).toBe('open'));
    const { threadId } = await owner.result.current.cpp.client!.openThread();
    owner.rerender({ threadId });
    await waitFor(() => expect(owner.result.current.members.value?.ownerDid).toBe(alice.did));
    expect(owner.result.current.invites.value).toEqual([]);
    await waitFor(() => expect(owner.result.current.presence).toEqual([{ did: alice.did, typing: false }]));

    await act(() => owner.result.current.members.add(bob.did, 'writer'));
    expect(owner.result.current.members.value?.members).toEqual([{ did: bob.did, role: 'writer' }]);
    const made = await act(() => owner.result.current.invites.create('reader'));
    expect(made.token).toMatch(/^cppinv_/);
    expect(owner.result.current.invites.value).toEqual([made.invite]);
    await act(() => owner.result.current.invites.revoke(made.invite.inviteId));
    expect(owner.result.current.invites.value).toEqual([]);

    expect(owner.result.current.links.value).toEqual([]);
    const link = await act(() => owner.result.current.links.create('tree'));
    expect(owner.result.current.links.value).toEqual([link.link]);
    // The page itself is read over HTTP in the server's and cpp-chat's tests (happy-dom's fetch applies CORS).
    expect(link.url).toBe(`${endpoint.replace(/^ws/, 'http')}/share/${link.token}`);
    await act(() => owner.result.current.links.revoke(link.link.linkId));
    expect(owner.result.current.links.value).toEqual([]);

    const member = renderSharing(endpoint, bob);
    await waitFor(() => expect(member.result.current.cpp.client?.status).toBe('open'));
    await member.result.current.cpp.client!.openThread(threadId);
    member.rerender({ threadId });
    const both = [alice.did, bob.did].sort().map((did) => ({ did, typing: false }));
    await waitFor(() => expect(owner.result.current.presence).toEqual(both));
    await waitFor(() => expect(member.result.current.presence).toEqual(both));
    // A member may read the members, not the invites (the owner's).
    await waitFor(() => expect(member.result.current.members.value?.members).toHaveLength(1));
    await waitFor(() => expect(member.result.current.invites.error?.message).toMatch(/thread/));

    await act(() => owner.result.current.members.remove(bob.did));
    await waitFor(() => expect(owner.result.current.presence).toEqual([{ did: alice.did, typing: false }]));
    await waitFor(() => expect(member.result.current.presence).toEqual([]));
    member.unmount();
    owner.unmount();
  });
});
