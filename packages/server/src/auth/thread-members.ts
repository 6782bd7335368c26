import { CPPError, ErrorCode, type MemberRole, type ServerPayload } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import type { ConversationStore } from '../store/conversation-store.js';
import { notFound, type ThreadAccess } from './thread-access.js';

/** What CPP_MEMBERS says of a thread. */
export type MembersPayload = ServerPayload<'CPP_MEMBERS'>;

/**
 * Who shares a thread (docs/PROTOCOL.md §29): the owner adds members, changes their roles and removes them; a member
 * leaves. A removal is revoked on every server at once, through the thread's engine, before it is answered.
 */
export class ThreadMembers {
  constructor(
    private readonly access: ThreadAccess,
    private readonly store: ConversationStore,
    /** Members are identities proven by their keys: with claimed identities a thread id is the capability (§2.3). */
    private readonly proven: boolean,
  ) {}

  /** CPP_MEMBER_ADD: `did` becomes a member with `role`, or a member gets `role`. */
  async add(threadId: string, did: string, role: MemberRole, identity: Identity): Promise<MembersPayload> {
    this.checkProven();
    const engine = await this.access.thread(threadId, identity, 'own');
    if (did === engine.ownerDid)
      throw new CPPError(ErrorCode.INVALID_FRAME, `${did} owns thread ${threadId}; an owner is not a member`);
    await this.access.checkMemberRoom(threadId, did);
    if (!(await this.store.setMember(threadId, did, role))) throw notFound(threadId);
    return this.payload(engine);
  }

  /**
   * CPP_MEMBER_REMOVE: the owner removes `did`, or a member leaves (`did` its own). The identity's subscriptions end
   * with CPP_THREAD_REVOKED before this resolves. Resolves with the members left, and whether the asker left.
   */
  async remove(
    threadId: string,
    did: string,
    identity: Identity,
  ): Promise<{ members: MembersPayload; engine: ThreadEngine; left: boolean }> {
    this.checkProven();
    const left = did === identity.did;
    const engine = await this.access.thread(threadId, identity, left ? 'read' : 'own');
    if (did === engine.ownerDid)
      throw new CPPError(ErrorCode.INVALID_FRAME, `${did} owns thread ${threadId}; an owner deletes a thread instead`);
    if (!(await this.store.removeMember(threadId, did)))
      throw new CPPError(ErrorCode.NOT_FOUND, `${did} is not a member of thread ${threadId}`);
    engine.revoke(did, left ? 'left' : 'removed');
    return { members: await this.payload(engine), engine, left };
  }

  /** CPP_MEMBER_LIST: for the owner and every member. */
  async list(threadId: string, identity: Identity): Promise<MembersPayload> {
    return this.payload(await this.access.thread(threadId, identity, 'read'));
  }

  private async payload(engine: ThreadEngine): Promise<MembersPayload> {
    const members = await this.store.members(engine.threadId);
    return { threadId: engine.threadId, ownerDid: engine.ownerDid, members };
  }

  private checkProven(): void {
    if (!this.proven)
      throw new CPPError(ErrorCode.FORBIDDEN, 'members need proven identities: this server takes claimed ones');
  }
}
