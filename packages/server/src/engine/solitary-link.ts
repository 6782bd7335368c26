import type { ConversationStore, StoredThread } from '../store/conversation-store.js';
import type { LinkedEngine, ThreadLink, ThreadLinks } from './thread-link.js';

/**
 * The links of a server alone with its store: no other server to tell or to forward to. Its generation locks are
 * still real, held in this process: an engine unloaded while its generation was being committed and the engine
 * loaded after it for the same thread must not both generate.
 */
export class SolitaryLinks implements ThreadLinks {
  /** The link holding each thread's generation lock. */
  private readonly locks = new Map<string, SolitaryLink>();

  constructor(private readonly store: ConversationStore) {}

  async open(threadId: string): Promise<{ link: ThreadLink; stored: StoredThread | undefined }> {
    return { link: new SolitaryLink(threadId, this.store, this.locks), stored: await this.store.loadThread(threadId) };
  }
}

/** See `SolitaryLinks`. */
export class SolitaryLink implements ThreadLink {
  private engine: LinkedEngine | undefined;

  constructor(
    private readonly threadId: string,
    private readonly store: ConversationStore,
    private readonly locks: Map<string, SolitaryLink>,
  ) {}

  // Nobody else to tell: these run for every frame a thread sends, and do nothing.
  chunk(): void {}
  frame(): void {}
  change(): void {}
  presence(): void {}

  async claimGeneration(): Promise<boolean> {
    const holder = this.locks.get(this.threadId);
    if (holder && holder !== this) return false;
    this.locks.set(this.threadId, this);
    return true;
  }

  /** Nobody can take a lock over in one process: it is held until released. */
  async confirmGeneration(): Promise<void> {}

  releaseGeneration(): void {
    if (this.locks.get(this.threadId) === this) this.locks.delete(this.threadId);
  }

  /** No other server runs a generation: one streaming in the store is a crash's (or an engine's of this process). */
  async forward(): Promise<undefined> {
    return undefined;
  }

  async reload(): Promise<void> {
    const stored = await this.store.loadThread(this.threadId);
    if (stored) this.engine?.resynchronise(stored);
  }

  attach(engine: LinkedEngine): void {
    this.engine = engine;
  }

  async close(): Promise<void> {
    this.releaseGeneration();
  }
}
