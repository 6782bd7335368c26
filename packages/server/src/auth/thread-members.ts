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

  /**
   * An identity joins through an invite (§29.7) with `role`; a member keeps the higher of its role and `role`, and
   * the owner stays the owner.
   */
  async join(threadId: string, did: string, role: MemberRole): Promise<MembersPayload> {
    const owned = await this.store.threadSummary(threadId);
    if (!owned) throw notFound(threadId);
    if (did !== owned.ownerDid) {
      await this.access.checkMemberRoom(threadId, did);
      const held = await this.store.memberRole(threadId, did);
      const joined = held === 'writer' ? held : role;
      if (!(await this.store.setMember(threadId, did, joined))) throw notFound(threadId);
    }
    return { threadId, ownerDid: owned.ownerDid, members: await this.store.members(threadId) };
  }

  /** RATE_LIMITED when `did` would be one member more than the thread may have (its owner and members have room). */
  async checkRoomFor(threadId: string, did: string): Promise<void> {
    const owned = await this.store.threadSummary(threadId);
    if (owned && did !== owned.ownerDid) await this.access.checkMemberRoom(threadId, did);
  }

  /** CPP_MEMBER_LIST: for the owner and every member. */
  async list(threadId: string, identity: Identity): Promise<MembersPayload> {
    return this.payload(await this.access.thread(threadId, identity, 'read'));
  }

  private async payload(engine: ThreadEngine): Promise<MembersPayload> {
    const members = await this.store.members(engine.threadId);
    return { threadId: engine.threadId, ownerDid: engine.ownerDid, members };
  }

  /** FORBIDDEN with claimed identities: sharing and invites are for proven ones. */
  checkProven(): void {
    if (!this.proven)
      throw new CPPError(ErrorCode.FORBIDDEN, 'members need proven identities: this server takes claimed ones');
  }
}
