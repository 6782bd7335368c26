import { CPPError, ErrorCode, newThreadId } from '@promethea/cpp-protocol';
import type { ConversationStore } from '../store/conversation-store.js';
import { StoreConflictError } from '../store/store-conflict-error.js';
import type { Identity } from './identity.js';
import { ThreadEngine, type ThreadEngineDependencies } from './thread-engine.js';
import type { ThreadLinks } from './thread-link.js';

/**
 * The threads held in memory: loaded from the store on first use (one load per thread, however many frames ask at
 * once), unloaded when nobody subscribes and nothing streams. Each is held with its link (`ThreadLinks`), which
 * keeps it in step with the other servers holding it, if any.
 */
export class ThreadRegistry {
  private readonly engines = new Map<string, ThreadEngine>();
  private readonly loading = new Map<string, Promise<ThreadEngine | undefined>>();
  /** One for every engine: an open thread keeps only what is its own. */
  private readonly engineDependencies: ThreadEngineDependencies;

  constructor(
    private readonly store: ConversationStore,
    dependencies: Omit<ThreadEngineDependencies, 'store' | 'onIdle'>,
    private readonly links: ThreadLinks,
  ) {
    this.engineDependencies = {
      ...dependencies,
      store,
      onIdle: (idle) => {
        if (this.engines.get(idle.threadId) !== idle) return;
        this.engines.delete(idle.threadId);
        idle.link.close().catch((error: unknown) => dependencies.onBackgroundError(error, idle.threadId));
      },
    };
  }

  get size(): number {
    return this.engines.size;
  }

  all(): ThreadEngine[] {
    return [...this.engines.values()];
  }

  /** The thread, or NOT_FOUND. */
  async require(threadId: string): Promise<ThreadEngine> {
    const engine = await this.find(threadId);
    if (!engine) throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} does not exist`);
    return engine;
  }

  /** Opens a thread, creating it (owned by `identity`) when it does not exist yet. */
  async open(threadId: string | undefined, identity: Identity): Promise<ThreadEngine> {
    const id = threadId ?? newThreadId();
    // The pending look-up of the thread until it exists, so that a frame right behind this one finds it created.
    const existing = threadId === undefined ? Promise.resolve(undefined) : this.find(id);
    const engine = await this.track(
      id,
      existing.then((found) => found ?? this.create(id, identity)),
    );
    if (!engine) throw new CPPError(ErrorCode.NOT_FOUND, `thread ${id} does not exist`);
    return engine;
  }

  private async create(threadId: string, identity: Identity): Promise<ThreadEngine | undefined> {
    const now = Date.now();
    try {
      await this.store.createThread({ threadId, ownerDid: identity.did, title: '', createdAt: now, updatedAt: now });
    } catch (error) {
      if (!StoreConflictError.isInstance(error)) throw error;
      // Another server created it between our look-up and our insert (open theirs), or the id is a deleted
      // thread's, retired for good (docs/PROTOCOL.md §25.2): an open of it is NOT_FOUND, never a new empty thread.
      const created = await this.load(threadId);
      if (!created) throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} was deleted`);
      return created;
    }
    return this.load(threadId);
  }

  private find(threadId: string): Promise<ThreadEngine | undefined> {
    const engine = this.engines.get(threadId);
    if (engine) return Promise.resolve(engine);
    return this.loading.get(threadId) ?? this.track(threadId, this.load(threadId));
  }

  /** Makes `lookUp` the thread's pending look-up until it settles: `find` shares it instead of loading again. */
  private track(threadId: string, lookUp: Promise<ThreadEngine | undefined>): Promise<ThreadEngine | undefined> {
    const tracked = lookUp.finally(() => {
      if (this.loading.get(threadId) === tracked) this.loading.delete(threadId);
    });
    this.loading.set(threadId, tracked);
    return tracked;
  }

  private async load(threadId: string): Promise<ThreadEngine | undefined> {
    const { link, stored } = await this.links.open(threadId);
    if (!stored) return undefined;
    const { graph, ...record } = stored;
    const engine = new ThreadEngine(record, graph, link, this.engineDependencies);
    link.attach(engine);
    this.engines.set(threadId, engine);
    return engine;
  }
}
