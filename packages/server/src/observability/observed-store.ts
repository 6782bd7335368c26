import { performance } from 'node:perf_hooks';
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
import type { Observers } from './observers.js';
import { runObserved } from './run-observed.js';
import type { StoreOperation } from './server-observer.js';

/** A store that times every operation of the store it wraps and reports it to the observers; nothing else changes. */
export class ObservedStore implements ConversationStore {
  constructor(
    private readonly store: ConversationStore,
    private readonly observers: Observers,
  ) {}

  createThread(record: ThreadRecord): Promise<void> {
    return this.timed('createThread', () => this.store.createThread(record));
  }

  loadThread(threadId: string): Promise<StoredThread | undefined> {
    return this.timed('loadThread', () => this.store.loadThread(threadId));
  }

  listThreads(did: string, page: ThreadPage): Promise<ThreadSummary[]> {
    return this.timed('listThreads', () => this.store.listThreads(did, page));
  }

  members(threadId: string): Promise<ThreadMember[]> {
    return this.timed('members', () => this.store.members(threadId));
  }

  memberRole(threadId: string, did: string): Promise<MemberRole | undefined> {
    return this.timed('memberRole', () => this.store.memberRole(threadId, did));
  }

  setMember(threadId: string, did: string, role: MemberRole): Promise<boolean> {
    return this.timed('setMember', () => this.store.setMember(threadId, did, role));
  }

  createInvite(invite: InviteRecord): Promise<boolean> {
    return this.timed('createInvite', () => this.store.createInvite(invite));
  }

  invites(threadId: string, now: number): Promise<InviteRecord[]> {
    return this.timed('invites', () => this.store.invites(threadId, now));
  }

  revokeInvite(threadId: string, inviteId: string): Promise<boolean> {
    return this.timed('revokeInvite', () => this.store.revokeInvite(threadId, inviteId));
  }

  useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return this.timed('useInvite', () => this.store.useInvite(tokenHash, now));
  }

  createShareLink(link: ShareLinkRecord): Promise<boolean> {
    return this.timed('createShareLink', () => this.store.createShareLink(link));
  }

  shareLinks(threadId: string): Promise<ShareLinkSummary[]> {
    return this.timed('shareLinks', () => this.store.shareLinks(threadId));
  }

  countShareLinks(ownerDid: string): Promise<number> {
    return this.timed('countShareLinks', () => this.store.countShareLinks(ownerDid));
  }

  revokeShareLink(threadId: string, linkId: string): Promise<boolean> {
    return this.timed('revokeShareLink', () => this.store.revokeShareLink(threadId, linkId));
  }

  findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined> {
    return this.timed('findShareLink', () => this.store.findShareLink(tokenHash));
  }

  findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    return this.timed('findInvite', () => this.store.findInvite(tokenHash, now));
  }

  removeMember(threadId: string, did: string): Promise<boolean> {
    return this.timed('removeMember', () => this.store.removeMember(threadId, did));
  }

  countThreads(ownerDid: string, upTo: number): Promise<number> {
    return this.timed('countThreads', () => this.store.countThreads(ownerDid, upTo));
  }

  threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined> {
    return this.timed('threadSummary', () => this.store.threadSummary(threadId));
  }

  searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]> {
    return this.timed('searchThreads', () => this.store.searchThreads(ownerDid, terms, limit));
  }

  deleteThread(threadId: string): Promise<boolean> {
    return this.timed('deleteThread', () => this.store.deleteThread(threadId));
  }

  importThreads(threads: readonly StoredThread[]): Promise<void> {
    return this.timed('importThreads', () => this.store.importThreads(threads));
  }

  importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number> {
    return this.timed('importThreadBatches', () => this.store.importThreadBatches(batches));
  }

  findNodeThread(nodeId: string): Promise<string | undefined> {
    return this.timed('findNodeThread', () => this.store.findNodeThread(nodeId));
  }

  commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    return this.timed('commit', () => this.store.commit(change, meta));
  }

  /** Timed once per batch: the metric counts transactions, whatever the number of streams in each. */
  saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    return this.timed('saveStreamedText', () => this.store.saveStreamedText(batch));
  }

  streamingThreads(): Promise<string[]> {
    return this.timed('streamingThreads', () => this.store.streamingThreads());
  }

  saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void> {
    return this.timed('saveToolCalls', () => this.store.saveToolCalls(threadId, nodeId, toolCalls));
  }

  interruptStreamingNodes(now: number): Promise<string[]> {
    return this.timed('interruptStreamingNodes', () => this.store.interruptStreamingNodes(now));
  }

  /** Timed twice: its opening, and its finish (`finishAttachment`), where a store keeps it. */
  async openAttachment(size?: number): Promise<AttachmentUpload> {
    const upload = await this.timed('openAttachment', () => this.store.openAttachment(size));
    return {
      write: (bytes) => upload.write(bytes),
      finish: (record) => this.timed('finishAttachment', () => upload.finish(record)),
      close: () => upload.close(),
    };
  }

  loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]> {
    return this.timed('loadAttachments', () => this.store.loadAttachments(ids));
  }

  attachmentBytes(sha256: string): Promise<Uint8Array | undefined> {
    return this.timed('attachmentBytes', () => this.store.attachmentBytes(sha256));
  }

  uploadedBytesSince(ownerDid: string, since: number): Promise<number> {
    return this.timed('uploadedBytesSince', () => this.store.uploadedBytesSince(ownerDid, since));
  }

  deleteUnusedAttachments(createdBefore: number): Promise<number> {
    return this.timed('deleteUnusedAttachments', () => this.store.deleteUnusedAttachments(createdBefore));
  }

  close(): Promise<void> {
    return this.store.close();
  }

  private timed<Result>(operation: StoreOperation, work: () => Promise<Result>): Promise<Result> {
    const start = performance.now();
    return runObserved(work, (failure) =>
      this.observers.storeOperation({
        operation,
        durationMs: performance.now() - start,
        failed: failure !== undefined,
      }),
    );
  }
}
