import {
  cutToolCalls,
  type MemberRole,
  type ThreadMember,
  type SearchHit,
  type ShareLinkSummary,
  type ThreadSummary,
  type ToolCall,
  type TreeChange,
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
} from './conversation-store.js';
import { gatheredUpload } from './gathered-upload.js';
import { assembleGraph, importChange, toNodeRecord, type NodeRecord } from './graph-records.js';
import { matchText } from './memory-search.js';
import { StoreConflictError } from './store-conflict-error.js';
import { byListOrder } from './thread-pages.js';
import { endedAnswerIds, spellParts, withStreamedText, type TextPieceRow } from './streamed-text.js';

interface MemoryThread {
  record: ThreadRecord;
  version: number;
  rootNodeId: string | null;
  activeHeadMessageId: string | null;
  /** A Map keeps first-insertion order when a value is replaced: that is the commit order children follow. */
  nodes: Map<string, NodeRecord>;
  /** DID → role; a Map keeps the order members were first added in. */
  members: Map<string, MemberRole>;
  /** Invite id → invite. */
  invites: Map<string, InviteRecord>;
  shareLinks: Map<string, ShareLinkRecord>;
}

/**
 * The store for tests and single-process demos. It behaves like `SqliteStore` in every observable way, and copies
 * everything in and out so that no caller can reach into its state.
 */
export class MemoryStore implements ConversationStore {
  private readonly threads = new Map<string, MemoryThread>();
  /** Node id → thread id, for the uniqueness of node ids across threads. */
  private readonly nodeThreads = new Map<string, string>();
  /**
   * Streaming node id → its saved pieces of text by part and offset (`content:12`), as the SQL stores keep them in a
   * table of their own.
   */
  private readonly pieces = new Map<string, Map<string, TextPieceRow>>();
  /** The ids of deleted threads: retired, never created again (the SQL stores' `deleted_threads`). */
  private readonly deletedThreadIds = new Set<string>();
  private readonly attachments = new Map<string, AttachmentRecord>();
  /** SHA-256 → bytes, kept once however many attachments have them. */
  private readonly blobs = new Map<string, Uint8Array>();
  private closed = false;

  async createThread(record: ThreadRecord): Promise<void> {
    this.ensureOpen();
    if (this.threads.has(record.threadId) || this.deletedThreadIds.has(record.threadId))
      throw StoreConflictError.threadExists(record.threadId);
    this.threads.set(record.threadId, {
      record: { ...record },
      version: 0,
      rootNodeId: null,
      activeHeadMessageId: null,
      nodes: new Map(),
      members: new Map(),
      invites: new Map(),
      shareLinks: new Map(),
    });
  }

  async loadThread(threadId: string): Promise<StoredThread | undefined> {
    this.ensureOpen();
    const thread = this.threads.get(threadId);
    if (!thread) return undefined;
    const { version, rootNodeId, activeHeadMessageId } = thread;
    const nodes = [...thread.nodes.values()];
    const pieces = nodes.filter((node) => node.status === 'streaming').flatMap((node) => this.piecesOf(node.id));
    const copies = structuredClone(nodes).map((record) => ({ ...record, childrenIds: [] }));
    const graph = assembleGraph(
      { threadId, version, rootNodeId, activeHeadMessageId },
      withStreamedText(copies, pieces),
    );
    return { ...thread.record, graph };
  }

  /** Sorts the owner's threads for each page: the memory store is for tests and demos, not for long histories. */
  async listThreads(did: string, { limit, after }: ThreadPage): Promise<ThreadSummary[]> {
    this.ensureOpen();
    return [...this.threads.values()]
      .filter((thread) => thread.record.ownerDid === did || thread.members.has(did))
      .map((thread) => {
        const role = thread.members.get(did);
        return role === undefined ? summaryOf(thread) : { ...summaryOf(thread), role };
      })
      .filter((summary) => after === undefined || byListOrder(summary, after) > 0)
      .sort(byListOrder)
      .slice(0, limit);
  }

  async members(threadId: string): Promise<ThreadMember[]> {
    this.ensureOpen();
    return [...(this.threads.get(threadId)?.members ?? [])].map(([did, role]) => ({ did, role }));
  }

  async memberRole(threadId: string, did: string): Promise<MemberRole | undefined> {
    this.ensureOpen();
    return this.threads.get(threadId)?.members.get(did);
  }

  async setMember(threadId: string, did: string, role: MemberRole): Promise<boolean> {
    this.ensureOpen();
    const thread = this.threads.get(threadId);
    thread?.members.set(did, role);
    return thread !== undefined;
  }

  async removeMember(threadId: string, did: string): Promise<boolean> {
    this.ensureOpen();
    return this.threads.get(threadId)?.members.delete(did) ?? false;
  }

  async createShareLink(link: ShareLinkRecord): Promise<boolean> {
    this.ensureOpen();
    const thread = this.threads.get(link.threadId);
    thread?.shareLinks.set(link.linkId, { ...link });
    return thread !== undefined;
  }

  async shareLinks(threadId: string): Promise<ShareLinkSummary[]> {
    this.ensureOpen();
    return [...(this.threads.get(threadId)?.shareLinks.values() ?? [])]
      .sort((a, b) => a.createdAt - b.createdAt || (a.linkId < b.linkId ? -1 : 1))
      .map(({ linkId, scope, createdAt }) => ({ linkId, scope, createdAt }));
  }

  async countShareLinks(ownerDid: string): Promise<number> {
    this.ensureOpen();
    let count = 0;
    for (const thread of this.threads.values())
      for (const link of thread.shareLinks.values()) if (link.ownerDid === ownerDid) count += 1;
    return count;
  }

  async revokeShareLink(threadId: string, linkId: string): Promise<boolean> {
    this.ensureOpen();
    return this.threads.get(threadId)?.shareLinks.delete(linkId) ?? false;
  }

  async findShareLink(tokenHash: string): Promise<ShareLinkRecord | undefined> {
    this.ensureOpen();
    for (const thread of this.threads.values())
      for (const link of thread.shareLinks.values()) if (link.tokenHash === tokenHash) return { ...link };
    return undefined;
  }

  async createInvite(invite: InviteRecord): Promise<boolean> {
    this.ensureOpen();
    const thread = this.threads.get(invite.threadId);
    thread?.invites.set(invite.inviteId, { ...invite });
    return thread !== undefined;
  }

  async invites(threadId: string, now: number): Promise<InviteRecord[]> {
    this.ensureOpen();
    return [...(this.threads.get(threadId)?.invites.values() ?? [])]
      .filter((invite) => usable(invite, now))
      .sort((a, b) => a.createdAt - b.createdAt || (a.inviteId < b.inviteId ? -1 : 1))
      .map((invite) => ({ ...invite }));
  }

  async revokeInvite(threadId: string, inviteId: string): Promise<boolean> {
    this.ensureOpen();
    return this.threads.get(threadId)?.invites.delete(inviteId) ?? false;
  }

  async useInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    const invite = this.usableInvite(tokenHash, now);
    if (invite) invite.uses += 1;
    return invite && { ...invite };
  }

  async findInvite(tokenHash: string, now: number): Promise<InviteRecord | undefined> {
    const invite = this.usableInvite(tokenHash, now);
    return invite && { ...invite };
  }

  private usableInvite(tokenHash: string, now: number): InviteRecord | undefined {
    this.ensureOpen();
    for (const thread of this.threads.values()) {
      for (const invite of thread.invites.values()) {
        if (invite.tokenHash === tokenHash) return usable(invite, now) ? invite : undefined;
      }
    }
    return undefined;
  }

  async countThreads(ownerDid: string, upTo: number): Promise<number> {
    this.ensureOpen();
    let count = 0;
    for (const thread of this.threads.values()) {
      if (count >= upTo) break;
      if (thread.record.ownerDid === ownerDid) count += 1;
    }
    return count;
  }

  async threadSummary(threadId: string): Promise<OwnedThreadSummary | undefined> {
    this.ensureOpen();
    const thread = this.threads.get(threadId);
    return thread && { ownerDid: thread.record.ownerDid, summary: summaryOf(thread) };
  }

  async searchThreads(ownerDid: string, terms: readonly string[], limit: number): Promise<SearchHit[]> {
    this.ensureOpen();
    const titles = [...this.threads.values()]
      .filter(({ record }) => record.ownerDid === ownerDid && matchText(record.title, terms) !== undefined)
      .map(({ record }) => record)
      .sort(byListOrder)
      .slice(0, limit)
      .map(({ threadId, title }): SearchHit => ({ threadId, title, nodeId: null, snippet: title }));
    // Messages most recently stored first: nodeThreads holds them in the order they were first stored.
    const nodes: SearchHit[] = [];
    for (const [nodeId, threadId] of [...this.nodeThreads].reverse()) {
      if (titles.length + nodes.length === limit) break;
      const { record, nodes: stored } = this.threads.get(threadId)!;
      if (record.ownerDid !== ownerDid) continue;
      const snippet = matchText(stored.get(nodeId)!.content, terms);
      if (snippet !== undefined) nodes.push({ threadId, title: record.title, nodeId, snippet });
    }
    return [...titles, ...nodes];
  }

  async deleteThread(threadId: string): Promise<boolean> {
    this.ensureOpen();
    const thread = this.threads.get(threadId);
    if (!thread) return false;
    for (const nodeId of thread.nodes.keys()) {
      this.nodeThreads.delete(nodeId);
      this.pieces.delete(nodeId);
    }
    this.deletedThreadIds.add(threadId);
    this.threads.delete(threadId);
    this.freeAttachments((record) => record.threadId === threadId);
    return true;
  }

  async importThreads(threads: readonly StoredThread[]): Promise<void> {
    this.ensureOpen();
    // Every id is checked before anything is written: all of the threads or none.
    const threadIds = new Set<string>();
    const nodeIds = new Set<string>();
    const attachmentIds = new Set<string>();
    for (const { threadId, graph } of threads) {
      if (this.threads.has(threadId) || this.deletedThreadIds.has(threadId) || threadIds.has(threadId))
        throw StoreConflictError.threadExists(threadId);
      threadIds.add(threadId);
      for (const nodeId of Object.keys(graph.nodes)) {
        const owner = this.nodeThreads.get(nodeId) ?? (nodeIds.has(nodeId) ? 'another imported thread' : undefined);
        if (owner !== undefined) throw StoreConflictError.nodeInOtherThread(nodeId);
        nodeIds.add(nodeId);
      }
      const carried = new Set(
        Object.values(graph.nodes).flatMap((node) => (node.attachments ?? []).map(({ id }) => id)),
      );
      for (const id of carried) {
        if (this.attachments.get(id)?.threadId !== null || attachmentIds.has(id))
          throw StoreConflictError.attachmentUnavailable(id);
        attachmentIds.add(id);
      }
    }
    for (const thread of threads) {
      const { graph: _graph, ...record } = thread;
      await this.createThread(record);
      await this.commit(importChange(thread), { updatedAt: record.updatedAt });
    }
  }

  /** Holds every batch, then imports them as one: the memory store holds everything anyway. */
  async importThreadBatches(batches: AsyncIterable<readonly StoredThread[]>): Promise<number> {
    const threads: StoredThread[] = [];
    for await (const batch of batches) threads.push(...batch);
    await this.importThreads(threads);
    return threads.length;
  }

  async findNodeThread(nodeId: string): Promise<string | undefined> {
    this.ensureOpen();
    return this.nodeThreads.get(nodeId);
  }

  async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    this.ensureOpen();
    const thread = this.threads.get(change.threadId);
    if (thread?.version !== change.baseVersion)
      throw StoreConflictError.staleVersion(change.threadId, thread?.version, change.baseVersion);
    for (const node of change.nodes) {
      const owner = this.nodeThreads.get(node.id);
      if (owner !== undefined && owner !== change.threadId) throw StoreConflictError.nodeInOtherThread(node.id);
      for (const { id } of node.attachments ?? []) {
        const threadId = this.attachments.get(id)?.threadId;
        if (threadId === undefined || (threadId !== null && threadId !== change.threadId))
          throw StoreConflictError.attachmentUnavailable(id);
      }
    }
    for (const nodeId of change.removedNodeIds ?? []) {
      if (!thread.nodes.delete(nodeId)) continue;
      this.nodeThreads.delete(nodeId);
      this.pieces.delete(nodeId);
    }
    for (const node of change.nodes) {
      thread.nodes.set(node.id, toNodeRecord(structuredClone(node)));
      this.nodeThreads.set(node.id, change.threadId);
      for (const { id } of node.attachments ?? []) this.attachments.get(id)!.threadId = change.threadId;
    }
    if (change.removedNodeIds?.length) {
      const carried = new Set(
        [...thread.nodes.values()].flatMap((node) => (node.attachments ?? []).map(({ id }) => id)),
      );
      this.freeAttachments((record) => record.threadId === change.threadId && !carried.has(record.id));
    }
    for (const nodeId of endedAnswerIds(change.nodes)) this.pieces.delete(nodeId);
    thread.rootNodeId = change.rootNodeId;
    thread.activeHeadMessageId = change.activeHeadMessageId;
    thread.version = change.version;
    thread.record.updatedAt = meta.updatedAt;
    if (meta.title !== undefined) thread.record.title = meta.title;
  }

  async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    this.ensureOpen();
    for (const { threadId, nodeId, part = 'content', offset, text } of batch) {
      if (this.threads.get(threadId)?.nodes.get(nodeId)?.status !== 'streaming') continue;
      const pieces = this.pieces.get(nodeId) ?? new Map<string, TextPieceRow>();
      pieces.set(`${part}:${offset}`, { nodeId, part, offset, text });
      this.pieces.set(nodeId, pieces);
    }
  }

  async streamingThreads(): Promise<string[]> {
    this.ensureOpen();
    const streaming = [...this.threads].filter(([, thread]) =>
      [...thread.nodes.values()].some((node) => node.status === 'streaming'),
    );
    return streaming.map(([threadId]) => threadId).sort();
  }

  async saveToolCalls(threadId: string, nodeId: string, toolCalls: readonly ToolCall[]): Promise<void> {
    this.ensureOpen();
    const node = this.threads.get(threadId)?.nodes.get(nodeId);
    if (node?.status !== 'streaming') return;
    if (toolCalls.length > 0) node.toolCalls = structuredClone([...toolCalls]);
    else delete node.toolCalls;
  }

  async interruptStreamingNodes(now: number): Promise<string[]> {
    this.ensureOpen();
    const recovered: string[] = [];
    for (const [threadId, thread] of this.threads) {
      const streaming = [...thread.nodes.values()].filter((node) => node.status === 'streaming');
      if (streaming.length === 0) continue;
      for (const node of streaming) {
        Object.assign(node, spellParts(node, this.piecesOf(node.id)));
        node.status = 'interrupted';
        const toolCalls = cutToolCalls(node.toolCalls ?? [], node.content.length);
        if (toolCalls.length > 0) node.toolCalls = toolCalls;
        else delete node.toolCalls;
        this.pieces.delete(node.id);
      }
      thread.version += 1;
      thread.record.updatedAt = now;
      recovered.push(threadId);
    }
    return recovered.sort();
  }

  async openAttachment(size?: number): Promise<AttachmentUpload> {
    this.ensureOpen();
    // The gathered bytes are the upload's own: kept as they are.
    return gatheredUpload(size, async (record, bytes) => {
      this.ensureOpen();
      if (this.attachments.has(record.id)) throw StoreConflictError.attachmentExists(record.id);
      this.attachments.set(record.id, { ...record });
      if (!this.blobs.has(record.sha256)) this.blobs.set(record.sha256, bytes);
    });
  }

  async loadAttachments(ids: readonly string[]): Promise<AttachmentRecord[]> {
    this.ensureOpen();
    return ids.flatMap((id) => {
      const record = this.attachments.get(id);
      return record ? [{ ...record }] : [];
    });
  }

  async attachmentBytes(sha256: string): Promise<Uint8Array | undefined> {
    this.ensureOpen();
    return this.blobs.get(sha256)?.slice();
  }

  async uploadedBytesSince(ownerDid: string, since: number): Promise<number> {
    this.ensureOpen();
    let bytes = 0;
    for (const record of this.attachments.values())
      if (record.ownerDid === ownerDid && record.createdAt >= since) bytes += record.size;
    return bytes;
  }

  async deleteUnusedAttachments(createdBefore: number): Promise<number> {
    this.ensureOpen();
    return this.freeAttachments((record) => record.threadId === null && record.createdAt < createdBefore);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Deletes the attachments `unused` picks, and the bytes no attachment has any more; returns how many went. */
  private freeAttachments(unused: (record: AttachmentRecord) => boolean): number {
    const freed = [...this.attachments.values()].filter(unused);
    for (const { id } of freed) this.attachments.delete(id);
    const kept = new Set([...this.attachments.values()].map(({ sha256 }) => sha256));
    for (const { sha256 } of freed) if (!kept.has(sha256)) this.blobs.delete(sha256);
    return freed.length;
  }

  private piecesOf(nodeId: string): TextPieceRow[] {
    return [...(this.pieces.get(nodeId)?.values() ?? [])];
  }

  /** A closed store refuses work like a closed database does, so tests catch use after close. */
  private ensureOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }
}

/** Ties are broken by thread id, newest first: generated thread ids are ULIDs, which sort by creation time. */
function summaryOf({ record, version, nodes }: MemoryThread): ThreadSummary {
  const { threadId, title, createdAt, updatedAt } = record;
  return { threadId, title, createdAt, updatedAt, version, nodeCount: nodes.size };
}

/** Negative when `a` comes first in the list, most recently updated first. */

/** Whether an invite can still be used at `now`: not expired, uses left. */
function usable(invite: InviteRecord, now: number): boolean {
  return invite.expiresAt > now && invite.uses < invite.maxUses;
}
