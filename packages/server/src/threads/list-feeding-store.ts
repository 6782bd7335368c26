import type {
  ShareLinkSummary,
  MemberRole,
  SearchHit,
  ThreadMember,
  ThreadSummary,
  ToolCall,
  TreeChange,
} from '@promethea/cpp-protocol';
import type {
  AttachmentRecord,
  AttachmentUpload,
  CommitMeta,
  ConversationStore,
  OwnedThreadSummary,
  StoredThread,
  StreamedText,
  ThreadPage,
  ThreadRecord,
  InviteRecord,
  ShareLinkRecord,
} from '../store/conversation-store.js';
import { importChange } from '../store/graph-records.js';
import type { ThreadListFeed } from './thread-list-feed.js';

/**
 * A store that tells the thread list's subscribers what each of its writes changed (docs/PROTOCOL.md §7.11); every
 * operation is the wrapped store's. It sits under the engine, so every way a thread changes passes through it.
 */
export class ListFeedingStore implements ConversationStore {
  constructor(
    private readonly store: ConversationStore,
    private readonly feed: ThreadListFeed,
    /** A summary that could not be read after a change that was committed: the change stands, the update is lost. */
    private readonly onError: (error: unknown, threadId: string) => void,
  ) {}

  async createThread(record: ThreadRecord): Promise<void> {
    await this.store.createThread(record);
    const { threadId, ownerDid, title, createdAt, updatedAt } = record;
    this.feed.updated(ownerDid, { threadId, title, createdAt, updatedAt, version: 0, nodeCount: 0 });
  }

  loadThread(threadId: string): Promise<StoredThread | undefined> {
    return this.store.loadThread(threadId);
  }

  listThreads(did: string, page: ThreadPage): Promise<ThreadSummary[]> {
    return this.store.listThreads(did, page);
  }

  members(threadId: string): Promise<ThreadMember[]> {
    return this.store.members(threadId);
  }

  memberRole(threadId: string, did: string): Promise<MemberRole | undefined> {
    return this.store.memberRole(threadId, did);
  }

  /** The member's list gains the thread, with its role. */
  async setMember(threadId: string, did: string, role: MemberRole): Promise<boolean> {
    const set = await this.store.setMember(threadId, did, role);
    if (set) this.tell(threadId);
    return set;
  }

  createInvite(invite: InviteRecord): Promise<boolean> {
    return this.store.createInvite(invite);
  }

  invites(threadId: string, now: number): Promise<InviteRecord[]> {
    return this.store.invites(threadId, now);
  }

  revokeInvite(threadId: string, inviteId: string): Promise<boolean> {
    return this.store.revokeInvite(threadId, inviteId);
  }

  useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return this.store.useInvite(tokenHash, now);
  }

  createShareLink(link: ShareLinkRecord): Promise<boolean> {
    return this.store.createShareLink(link);
  }

  shareLinks(threadId: string): Promise<ShareLinkSummary[]> {
    return this.store.shareLinks(threadId);
  }

  countShareLinks(ownerDid: string): Promise<number> {
    return this.store.countShareLinks(ownerDid);
  }

  revokeShareLink(threadId: string, linkId: string): Promise<boolean> {
    return this.store.revokeShareLink(threadId, linkId);
  }

  findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined> {
    return this.store.findShareLink(tokenHash);
  }

  findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return this.store.findInvite(tokenHash, now);
  }

  /** The thread leaves the former member's list as a deleted thread leaves it. */
  async removeMember(threadId: string, did: string): Promise<boolean> {
    const removed = await this.store.removeMember(threadId, did);
    if (removed) this.feed.deleted(did, threadId);
    return removed;
  }

  countThreads(ownerDid: string, upTo: number): Promise<number> {
    return this.store.countThreads(ownerDid, upTo);
  }

  threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined> {
    return this.store.threadSummary(threadId);
  }

  searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]> {
    return this.store.searchThreads(ownerDid, terms, limit);
  }

  /** The owner and the members are read before the thread goes, and only while someone listens. */
  async deleteThread(threadId: string): Promise<boolean> {
    const listeners = this.feed.listened ? await this.sharers(threadId) : [];
    const deleted = await this.store.deleteThread(threadId);
    if (deleted) for (const did of listeners) this.feed.deleted(did, threadId);
    return deleted;
  }

  /** An imported thread's summary is known from the thread itself: no store read per thread. */
  async importThreads(threads: readonly StoredThread[]): Promise<void> {
    await this.store.importThreads(threads);
    for (const told of this.listenedSummaries(threads)) this.feed.updated(told.ownerDid, told.summary);
  }

  /** What the list's subscribers are to be told is kept, as summaries, until the transaction commits. */
  async importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number> {
    const told: OwnedThreadSummary[] = [];
    const listened = (batch: readonly StoredThread[]) => told.push(...this.listenedSummaries(batch));
    const imported = await this.store.importThreadBatches(
      (async function* () {
        for await (const batch of batches) {
          listened(batch);
          yield batch;
        }
      })(),
    );
    for (const { ownerDid, summary } of told) this.feed.updated(ownerDid, summary);
    return imported;
  }

  findNodeThread(nodeId: string): Promise<string | undefined> {
    return this.store.findNodeThread(nodeId);
  }

  /** The summary is read after the commit and sent without holding the commit up. */
  async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    await this.store.commit(change, meta);
    this.tell(change.threadId);
  }

  saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    return this.store.saveStreamedText(batch);
  }

  saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void> {
    return this.store.saveToolCalls(threadId, nodeId, toolCalls);
  }

  streamingThreads(): Promise<string[]> {
    return this.store.streamingThreads();
  }

  async interruptStreamingNodes(now: number): Promise<string[]> {
    const threadIds = await this.store.interruptStreamingNodes(now);
    for (const threadId of threadIds) this.tell(threadId);
    return threadIds;
  }

  openAttachment(size?: number): Promise<AttachmentUpload> {
    return this.store.openAttachment(size);
  }

  loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]> {
    return this.store.loadAttachments(ids);
  }

  attachmentBytes(sha256: string): Promise<Uint8Array | undefined> {
    return this.store.attachmentBytes(sha256);
  }

  uploadedBytesSince(ownerDid: string, since: number): Promise<number> {
    return this.store.uploadedBytesSince(ownerDid, since);
  }

  deleteUnusedAttachments(createdBefore: number): Promise<number> {
    return this.store.deleteUnusedAttachments(createdBefore);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private listenedSummaries(threads: readonly StoredThread[]): OwnedThreadSummary[] {
    return threads
      .filter((thread) => this.feed.isListening(thread.ownerDid))
      .map((thread) => {
        const { threadId, ownerDid, title, createdAt, updatedAt } = thread;
        const { version, nodes } = importChange(thread);
        return { ownerDid, summary: { threadId, title, createdAt, updatedAt, version, nodeCount: nodes.length } };
      });
  }

  /** Everyone whose list shows the thread: its owner, then its members. */
  private async sharers(threadId: string): Promise<string[]> {
    const owned = await this.store.threadSummary(threadId);
    if (!owned) return [];
    return [owned.ownerDid, ...(await this.store.members(threadId)).map((member) => member.did)];
  }

  /** The owner's list gets the summary, each member's the summary with the member's role. */
  private tell(threadId: string): void {
    if (!this.feed.listened) return;
    Promise.all([this.store.threadSummary(threadId), this.store.members(threadId)]).then(
      ([owned, members]) => {
        if (!owned) return;
        this.feed.updated(owned.ownerDid, owned.summary);
        for (const { did, role } of members) this.feed.updated(did, { ...owned.summary, role });
      },
      (error: unknown) => this.onError(error, threadId),
    );
  }
}
