import { createHash, randomBytes } from 'node:crypto';
import { CPPError, ErrorCode, type InviteSummary, type MemberRole, type ServerPayload } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ConversationStore, InviteRecord } from '../store/conversation-store.js';
import type { ThreadAccess } from './thread-access.js';
import type { MembersPayload, ThreadMembers } from './thread-members.js';

/** How long an invite lasts when its owner does not say: a week. */
export const DEFAULT_INVITE_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

export interface InviteLimits {
  /** Usable invites one thread may have at once (0: no limit). */
  maxInvitesPerThread: number;
}

/** What CPP_INVITE_CREATE asks for. */
export interface InviteRequest {
  threadId: string;
  role: MemberRole;
  expiresInMs?: number | undefined;
  maxUses?: number | undefined;
}

/**
 * Invites to a thread (docs/PROTOCOL.md §29.7): capabilities for identities whose DID the owner does not know. A
 * token is 256 random bits, told once to the owner and stored only as its SHA-256, so that neither the store nor a
 * log holds one; whoever proves an identity and presents a token usable at that moment becomes a member.
 */
export class ThreadInvites {
  constructor(
    private readonly access: ThreadAccess,
    private readonly members: ThreadMembers,
    private readonly store: ConversationStore,
    private readonly limits: InviteLimits,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** CPP_INVITE_CREATE: the owner's. The answer alone carries the token. */
  async create(request: InviteRequest, identity: Identity): Promise<ServerPayload<'CPP_INVITE'>> {
    this.members.checkProven();
    const { threadId, role } = request;
    await this.access.thread(threadId, identity, 'own');
    const now = this.now();
    const max = this.limits.maxInvitesPerThread;
    const live = max > 0 ? (await this.store.invites(threadId, now)).length : 0;
    if (max > 0 && live >= max)
      throw new CPPError(ErrorCode.RATE_LIMITED, `thread ${threadId} has ${live} invites; the limit is ${max}`);
    const token = `cppinv_${randomBytes(32).toString('base64url')}`;
    const invite: InviteRecord = {
      inviteId: `inv_${randomBytes(16).toString('base64url')}`,
      threadId,
      tokenHash: hashOf(token),
      role,
      createdAt: now,
      expiresAt: now + (request.expiresInMs ?? DEFAULT_INVITE_LIFETIME_MS),
      maxUses: request.maxUses ?? 1,
      uses: 0,
    };
    if (!(await this.store.createInvite(invite)))
      throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} does not exist`);
    return { threadId, token, invite: summaryOf(invite) };
  }

  /** CPP_INVITE_LIST: the owner's; the invites still usable, without their tokens. */
  async list(threadId: string, identity: Identity): Promise<ServerPayload<'CPP_INVITES'>> {
    this.members.checkProven();
    await this.access.thread(threadId, identity, 'own');
    return this.payload(threadId);
  }

  /** CPP_INVITE_REVOKE: the owner's; from now on the token joins nobody. */
  async revoke(threadId: string, inviteId: string, identity: Identity): Promise<ServerPayload<'CPP_INVITES'>> {
    this.members.checkProven();
    await this.access.thread(threadId, identity, 'own');
    if (!(await this.store.revokeInvite(threadId, inviteId)))
      throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} has no invite ${inviteId}`);
    return this.payload(threadId);
  }

  /**
   * CPP_INVITE_ACCEPT: the identity joins with the invite's role (a member keeps the higher of the two). Every token
   * that joins nobody — unknown, revoked, expired, used up — gets the same answer, so that none tells them apart.
   */
  async accept(token: string, identity: Identity): Promise<MembersPayload> {
    this.members.checkProven();
    const tokenHash = hashOf(token);
    // A join the thread has no room for is refused before it takes a use: the invite stays for someone else.
    const found = await this.store.findInvite(tokenHash, this.now());
    if (found) await this.members.checkRoomFor(found.threadId, identity.did);
    const invite = found && (await this.store.useInvite(tokenHash, this.now()));
    if (!invite) throw new CPPError(ErrorCode.NOT_FOUND, 'no usable invite has this token');
    return this.members.join(invite.threadId, identity.did, invite.role);
  }

  private async payload(threadId: string): Promise<ServerPayload<'CPP_INVITES'>> {
    return { threadId, invites: (await this.store.invites(threadId, this.now())).map(summaryOf) };
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function summaryOf({ inviteId, role, expiresAt, maxUses, uses }: InviteRecord): InviteSummary {
  return { inviteId, role, expiresAt, maxUses, uses };
}
