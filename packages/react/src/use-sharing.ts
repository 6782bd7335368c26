import type { CPPClient } from '@promethea/cpp-client';
import type {
  InviteSummary,
  MemberRole,
  PresentIdentity,
  ServerPayload,
  ShareLinkSummary,
  ShareScope,
} from '@promethea/cpp-protocol';
import { useCallback, useEffect, useState } from 'react';

/** Who shares a thread: its owner and members (PROTOCOL.md §29.3). */
export type Members = ServerPayload<'CPP_MEMBERS'>;

/** What a hook of a thread's sharing holds: the last answer, or the last failure. */
interface Shared<Value> {
  /** `undefined` until the first answer (and while no client or thread is given). */
  value: Value | undefined;
  /** The last failure to read or change it, cleared by the next answer. */
  error: Error | undefined;
}

/**
 * Reads something of a thread's sharing when the client or the thread changes, and keeps the answer of each change
 * made through `change`. `read` is a module-level function: a new one each render would read again each render.
 */
function useShared<Value>(
  client: CPPClient | null,
  threadId: string | undefined,
  read: (client: CPPClient, threadId: string) => Promise<Value>,
) {
  const [state, setState] = useState<Shared<Value>>({ value: undefined, error: undefined });
  useEffect(() => {
    setState({ value: undefined, error: undefined });
    if (!client || threadId === undefined) return;
    let current = true;
    read(client, threadId).then(
      (value) => current && setState({ value, error: undefined }),
      (error: unknown) => current && setState({ value: undefined, error: asError(error) }),
    );
    return () => {
      current = false;
    };
  }, [client, threadId, read]);

  /** Runs a change; what it answers becomes the value (`kept`), a failure the error, and the promise rejects. */
  const change = useCallback(
    async <Result>(
      run: (client: CPPClient, threadId: string) => Promise<Result>,
      kept: (result: Result) => Value,
    ): Promise<Result> => {
      if (!client || threadId === undefined) throw new Error('no client or no thread');
      try {
        const result = await run(client, threadId);
        setState({ value: kept(result), error: undefined });
        return result;
      } catch (error) {
        setState((previous) => ({ ...previous, error: asError(error) }));
        throw error;
      }
    },
    [client, threadId],
  );
  return { ...state, change };
}

export interface MembersState extends Shared<Members> {
  /** The owner shares the thread with `did`, or changes its role. */
  add(did: string, role: MemberRole): Promise<Members>;
  /** The owner removes a member; a member removes itself to leave. */
  remove(did: string): Promise<Members>;
}

const readMembers = (client: CPPClient, threadId: string) => client.listMembers(threadId);

/** The thread's owner and members, for the owner and every member (PROTOCOL.md §29.3). */
export function useMembers(client: CPPClient | null, threadId: string | undefined): MembersState {
  const { value, error, change } = useShared(client, threadId, readMembers);
  const add = useCallback(
    (did: string, role: MemberRole) => change((c, id) => c.addMember(did, role, id), same),
    [change],
  );
  const remove = useCallback((did: string) => change((c, id) => c.removeMember(did, id), same), [change]);
  return { value, error, add, remove };
}

export interface InvitesState extends Shared<InviteSummary[]> {
  /** A new invite; its token, in the answer, is told this once. */
  create(role: MemberRole, options?: { expiresInMs?: number; maxUses?: number }): Promise<ServerPayload<'CPP_INVITE'>>;
  revoke(inviteId: string): Promise<InviteSummary[]>;
}

const readInvites = (client: CPPClient, threadId: string) => client.listInvites(threadId);

/** The owner's invites to the thread still usable, without their tokens (PROTOCOL.md §29.7). */
export function useInvites(client: CPPClient | null, threadId: string | undefined): InvitesState {
  const { value, error, change } = useShared(client, threadId, readInvites);
  const create = useCallback(
    (role: MemberRole, options: { expiresInMs?: number; maxUses?: number } = {}) =>
      change(
        async (c, id) => ({ made: await c.createInvite(role, options, id), invites: await c.listInvites(id) }),
        ({ invites }) => invites,
      ).then(({ made }) => made),
    [change],
  );
  const revoke = useCallback((inviteId: string) => change((c, id) => c.revokeInvite(inviteId, id), same), [change]);
  return { value, error, create, revoke };
}

export interface ShareLinksState extends Shared<ShareLinkSummary[]> {
  /** A read-only link of the branch or the tree as it is now; its `url` (and token) is told this once. */
  create(scope?: ShareScope): Promise<Awaited<ReturnType<CPPClient['createShareLink']>>>;
  revoke(linkId: string): Promise<ShareLinkSummary[]>;
}

const readShareLinks = (client: CPPClient, threadId: string) => client.listShareLinks(threadId);

/** The owner's read-only share links of the thread (PROTOCOL.md §29.10). */
export function useShareLinks(client: CPPClient | null, threadId: string | undefined): ShareLinksState {
  const { value, error, change } = useShared(client, threadId, readShareLinks);
  const create = useCallback(
    (scope: ShareScope = 'branch') =>
      change(
        async (c, id) => ({ made: await c.createShareLink(scope, id), links: await c.listShareLinks(id) }),
        ({ links }) => links,
      ).then(({ made }) => made),
    [change],
  );
  const revoke = useCallback((linkId: string) => change((c, id) => c.revokeShareLink(linkId, id), same), [change]);
  return { value, error, create, revoke };
}

/**
 * Who has the thread open, with whether each types (PROTOCOL.md §29.9), as the server last said: the hook's identity
 * among them. Empty until the thread is open.
 */
export function usePresence(client: CPPClient | null, threadId: string | undefined): PresentIdentity[] {
  const [present, setPresent] = useState<PresentIdentity[]>([]);
  useEffect(() => {
    setPresent(client && threadId !== undefined ? client.presence(threadId) : []);
    if (!client || threadId === undefined) return;
    const onPresence = (presence: { threadId: string; present: PresentIdentity[] }) => {
      if (presence.threadId === threadId) setPresent(presence.present);
    };
    const onDeleted = (deleted: string) => {
      if (deleted === threadId) setPresent([]);
    };
    client.on('presence', onPresence).on('threadDeleted', onDeleted);
    return () => {
      client.off('presence', onPresence).off('threadDeleted', onDeleted);
    };
  }, [client, threadId]);
  return present;
}

function same<Value>(value: Value): Value {
  return value;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
