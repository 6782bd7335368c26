import {
  CPPError,
  ErrorCode,
  getNode,
  type ImportFormat,
  type MemberRole,
  type ThreadGraph,
  type ThreadSummary,
} from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ThreadLimits } from '../engine/thread-context.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import type { ThreadRegistry } from '../engine/thread-registry.js';
import type { ConversationStore } from '../store/conversation-store.js';
import { type ImportLimits, importThreads } from '../threads/thread-importer.js';
import { PerMinuteAllowance } from './limits/per-minute-allowance.js';
import { jsonTextBytes, threadSize, type ThreadSize } from '../engine/thread-size.js';
import type { ServerLimits } from './limits/server-limits.js';

export interface ThreadAccessSettings {
  /**
   * Whether a thread is its owner's only. On when identities are proven; with claimed identities a thread id is the
   * capability to its thread (docs/PROTOCOL.md §2.3), since anyone may claim the owner's DID anyway.
   */
  ownerOnly: boolean;
  limits: Pick<
    ServerLimits,
    | 'maxThreadsPerDid'
    | 'maxMembersPerThread'
    | 'maxNodesPerThread'
    | 'maxThreadBytes'
    | 'maxPromptLength'
    | 'syncsPerMinute'
    | 'searchesPerMinute'
  >;
  /** What an imported file is held to, as an upload is. */
  fileLimits: ImportLimits['files'];
}

/**
 * What a frame needs of the thread it names (docs/PROTOCOL.md §29.2): `read` (subscribe, sync, list members, leave),
 * `write` (change the tree: a member needs the role `writer`), `own` (rename, delete, add and remove members: the
 * owner only).
 */
export type ThreadRight = 'read' | 'write' | 'own';

/**
 * Who may act on which thread, and how much: thread frames reach their thread through here, so that a thread the
 * identity neither owns nor is a member of is, to every frame but CPP_THREAD_OPEN, a thread that does not exist
 * (NOT_FOUND, word for word: no answer tells a thread id of someone else from an unknown one), before anything is
 * subscribed or done; a member lacking the right gets FORBIDDEN. Membership is read from the store on each frame of
 * a member, so that a removal holds on every server at once. The thread's engine checks the size limits
 * (`ThreadLimits`) in the thread's turn.
 */
export class ThreadAccess implements ThreadLimits {
  private readonly syncs: PerMinuteAllowance;
  private readonly searches: PerMinuteAllowance;
  /** Whether a thread's size is limited at all: counting it costs a walk of its nodes after each load. */
  private readonly sizeLimited: boolean;

  constructor(
    private readonly registry: ThreadRegistry,
    private readonly store: ConversationStore,
    private readonly settings: ThreadAccessSettings,
  ) {
    this.syncs = new PerMinuteAllowance(settings.limits.syncsPerMinute, 'syncs');
    this.searches = new PerMinuteAllowance(settings.limits.searchesPerMinute, 'searches');
    this.sizeLimited = settings.limits.maxNodesPerThread > 0 || settings.limits.maxThreadBytes > 0;
  }

  /**
   * The thread a frame names: NOT_FOUND when there is none, or when the identity neither owns it nor is a member;
   * FORBIDDEN when it is a member without `right`.
   */
  async thread(threadId: string, identity: Identity, right: ThreadRight = 'read'): Promise<ThreadEngine> {
    const engine = await this.registry.require(threadId);
    await this.check(engine, identity, right);
    return engine;
  }

  /** The thread a frame names, or `undefined` when there is none or the identity has no part in it. */
  async existing(threadId: string, identity: Identity, right: ThreadRight = 'read'): Promise<ThreadEngine | undefined> {
    try {
      return await this.thread(threadId, identity, right);
    } catch (error) {
      if (CPPError.isInstance(error) && error.code === ErrorCode.NOT_FOUND) return undefined;
      throw error;
    }
  }

  /** CPP_THREAD_IMPORT: new threads of the identity, within its quota and the limits of a thread. */
  importThreads(identity: Identity, format: ImportFormat, document: unknown): Promise<ThreadSummary[]> {
    return importThreads(this.store, identity.did, format, document, {
      ...this.settings.limits,
      files: this.settings.fileLimits,
    });
  }

  /**
   * CPP_THREAD_OPEN: opens the identity's thread, or creates one within the identity's quota. Another identity's
   * thread is FORBIDDEN here: its id is taken, so it can be neither opened nor created, and any refusal would say
   * as much (docs/PROTOCOL.md §23.4).
   */
  async open(threadId: string | undefined, identity: Identity): Promise<ThreadEngine> {
    if (this.settings.limits.maxThreadsPerDid > 0 && !(await this.exists(threadId))) await this.checkQuota(identity);
    const engine = await this.registry.open(threadId, identity);
    if (!this.owns(engine, identity) && (await this.roleOf(engine, identity)) === undefined)
      throw new CPPError(ErrorCode.FORBIDDEN, `thread ${engine.threadId} belongs to another identity`);
    return engine;
  }

  /** CPP_MEMBER_ADD: RATE_LIMITED when the thread has as many members as it may, `did` not among them. */
  async checkMemberRoom(threadId: string, did: string): Promise<void> {
    const max = this.settings.limits.maxMembersPerThread;
    if (max <= 0) return;
    const members = await this.store.members(threadId);
    if (members.length >= max && !members.some((member) => member.did === did))
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${threadId} has ${members.length} members; the limit is ${max}`,
      );
  }

  /** CPP_PROMPT and CPP_PIVOT_INIT: the prompt's length, and room in the thread for two more nodes and the prompt. */
  checkPrompt(graph: ThreadGraph, userPrompt: string, newNodeId: string, answers = 1): void {
    const { maxPromptLength } = this.settings.limits;
    if (maxPromptLength > 0 && userPrompt.length > maxPromptLength) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `the prompt is ${userPrompt.length} characters; the limit is ${maxPromptLength}`,
      );
    }
    this.checkRoom(graph, newNodeId, 1 + answers, userPrompt);
  }

  /**
   * Room in the thread for `count` more nodes, the first of them `newNodeId` (CPP_REGENERATE adds one), and
   * `addedText`.
   */
  checkRoom(graph: ThreadGraph, newNodeId: string, count: number, addedText = ''): void {
    // An exact retry creates nothing: the thread's engine answers it, full or not.
    if (!this.sizeLimited || getNode(graph, newNodeId)) return;
    const { nodes, bytes } = threadSize(graph);
    this.checkSize(graph.threadId, { nodes: nodes + count, bytes: bytes + jsonTextBytes(addedText) });
  }

  /**
   * CPP_CONTINUE: some room left in the thread's text, which the continuation adds to without a new node (so
   * checkRoom's retry test does not apply). A node that streams is a retry, answered by the thread whatever its size.
   */
  checkContinue(graph: ThreadGraph, nodeId: string): void {
    if (!this.sizeLimited || getNode(graph, nodeId)?.status === 'streaming') return;
    const { nodes, bytes } = threadSize(graph);
    this.checkSize(graph.threadId, { nodes, bytes: bytes + 1 });
  }

  /**
   * RATE_LIMITED when a thread would hold more than the limits allow: for every way a thread grows (a prompt, a pivot,
   * an import), with the size it would have.
   */
  checkSize(threadId: string, size: ThreadSize): void {
    const { maxNodesPerThread, maxThreadBytes } = this.settings.limits;
    if (maxNodesPerThread > 0 && size.nodes > maxNodesPerThread) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${threadId} is full: the limit is ${maxNodesPerThread} messages`,
      );
    }
    if (maxThreadBytes > 0 && size.bytes > maxThreadBytes) {
      throw new CPPError(
        ErrorCode.RATE_LIMITED,
        `thread ${threadId} is full: the limit is ${maxThreadBytes} bytes of text`,
      );
    }
  }

  /** CPP_THREAD_OPEN and CPP_SYNC_REQUEST, each answered with a whole thread: RATE_LIMITED past the identity's allowance. */
  checkSync(identity: Identity, connectionId: string): void {
    this.syncs.take(identity, connectionId);
  }

  /** CPP_THREAD_SEARCH, each a full-text query on the store: RATE_LIMITED past the identity's allowance. */
  checkSearch(identity: Identity, connectionId: string): void {
    this.searches.take(identity, connectionId);
  }

  /**
   * Whether the identity may read the thread's files (docs/PROTOCOL.md §27.5): as it may open the thread (its owner,
   * or a member), decided from the store, so that any server of a cluster answers the same.
   */
  async mayRead(threadId: string, identity: Identity): Promise<boolean> {
    if (!this.settings.ownerOnly) return true;
    const owned = await this.store.threadSummary(threadId);
    if (owned === undefined) return false;
    return owned.ownerDid === identity.did || (await this.store.memberRole(threadId, identity.did)) !== undefined;
  }

  private async check(engine: ThreadEngine, identity: Identity, right: ThreadRight): Promise<void> {
    if (this.owns(engine, identity)) return;
    const role = await this.roleOf(engine, identity);
    if (role === undefined) throw notFound(engine.threadId);
    if (right === 'own')
      throw new CPPError(ErrorCode.FORBIDDEN, `only the owner of thread ${engine.threadId} may do this`);
    if (right === 'write' && role === 'reader')
      throw new CPPError(ErrorCode.FORBIDDEN, `a reader of thread ${engine.threadId} cannot change it`);
  }

  /** With claimed identities everyone may act as the owner (§2.3): membership is a matter of proven identities. */
  private owns(engine: ThreadEngine, identity: Identity): boolean {
    return !this.settings.ownerOnly || engine.ownerDid === identity.did;
  }

  private roleOf(engine: ThreadEngine, identity: Identity): Promise<MemberRole | undefined> {
    return this.store.memberRole(engine.threadId, identity.did);
  }

  private async exists(threadId: string | undefined): Promise<boolean> {
    if (threadId === undefined) return false;
    try {
      await this.registry.require(threadId);
      return true;
    } catch (error) {
      if (CPPError.isInstance(error) && error.code === ErrorCode.NOT_FOUND) return false;
      throw error;
    }
  }

  private async checkQuota(identity: Identity): Promise<void> {
    const max = this.settings.limits.maxThreadsPerDid;
    const owned = await this.store.countThreads(identity.did, max);
    if (owned >= max)
      throw new CPPError(ErrorCode.RATE_LIMITED, `${identity.did} owns ${owned} threads; the limit is ${max}`);
  }
}

/** The answer to a thread that does not exist, and to one that is not the asker's: the same, word for word. */
export function notFound(threadId: string): CPPError {
  return new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} does not exist`);
}
