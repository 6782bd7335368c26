import { CPPError, ErrorCode, getNode, type ImportFormat, type ThreadSummary } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import type { ThreadRegistry } from '../engine/thread-registry.js';
import type { ConversationStore } from '../store/conversation-store.js';
import { importThreads } from '../threads/thread-importer.js';
import type { ServerLimits } from './limits/server-limits.js';

export interface ThreadAccessSettings {
  /**
   * Whether a thread is its owner's only. On when identities are proven; with claimed identities a thread id is the
   * capability to its thread (docs/PROTOCOL.md §2.3), since anyone may claim the owner's DID anyway.
   */
  ownerOnly: boolean;
  limits: Pick<ServerLimits, 'maxThreadsPerDid' | 'maxNodesPerThread' | 'maxPromptLength'>;
}

/**
 * Who may act on which thread, and how much: thread frames reach their thread through here, so that another
 * DID's thread is FORBIDDEN and the thread and size limits are RATE_LIMITED, before anything is subscribed or done.
 */
export class ThreadAccess {
  constructor(
    private readonly registry: ThreadRegistry,
    private readonly store: ConversationStore,
    private readonly settings: ThreadAccessSettings,
  ) {}

  /** The thread a frame names: NOT_FOUND when there is none, FORBIDDEN when it is not the identity's. */
  async thread(threadId: string, identity: Identity): Promise<ThreadEngine> {
    const engine = await this.registry.require(threadId);
    this.checkOwner(engine, identity);
    return engine;
  }

  /** The thread a frame names, or `undefined` when there is none; FORBIDDEN when it is not the identity's. */
  async existing(threadId: string, identity: Identity): Promise<ThreadEngine | undefined> {
    try {
      return await this.thread(threadId, identity);
    } catch (error) {
      if (CPPError.isInstance(error) && error.code === ErrorCode.NOT_FOUND) return undefined;
      throw error;
    }
  }

  /** CPP_THREAD_IMPORT: new threads of the identity, within its quota and the limits of a thread. */
  importThreads(identity: Identity, format: ImportFormat, document: unknown): Promise<ThreadSummary[]> {
    return importThreads(this.store, identity.did, format, document, this.settings.limits);
  }

  /** CPP_THREAD_OPEN: opens the identity's thread, or creates one within the identity's quota. */
  async open(threadId: string | undefined, identity: Identity): Promise<ThreadEngine> {
    if (this.settings.limits.maxThreadsPerDid > 0 && !(await this.exists(threadId))) await this.checkQuota(identity);
    const engine = await this.registry.open(threadId, identity);
    this.checkOwner(engine, identity);
    return engine;
  }

  /** CPP_PROMPT and CPP_PIVOT_INIT: the prompt's length, and room in the thread for two more nodes. */
  checkPrompt(engine: ThreadEngine, userPrompt: string, newNodeId: string): void {
    const { maxPromptLength, maxNodesPerThread } = this.settings.limits;
    if (maxPromptLength > 0 && userPrompt.length > maxPromptLength) {
      throw new CPPError(ErrorCode.RATE_LIMITED, `the prompt is ${userPrompt.length} characters; the limit is ${maxPromptLength}`);
    }
    // An exact retry creates nothing: the thread's engine answers it, full or not.
    if (maxNodesPerThread <= 0 || getNode(engine.graph, newNodeId)) return;
    if (Object.keys(engine.graph.nodes).length + 2 > maxNodesPerThread) {
      throw new CPPError(ErrorCode.RATE_LIMITED, `thread ${engine.threadId} is full: the limit is ${maxNodesPerThread} messages`);
    }
  }

  private checkOwner(engine: ThreadEngine, identity: Identity): void {
    if (this.settings.ownerOnly && engine.ownerDid !== identity.did) {
      throw new CPPError(ErrorCode.FORBIDDEN, `thread ${engine.threadId} belongs to another identity`);
    }
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
    const owned = (await this.store.listThreads(identity.did)).length;
    if (owned >= max) throw new CPPError(ErrorCode.RATE_LIMITED, `${identity.did} owns ${owned} threads; the limit is ${max}`);
  }
}
