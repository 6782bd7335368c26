import {
  CPPError,
  ErrorCode,
  getNode,
  safeCutLength,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { ConversationStore, ThreadRecord } from '../store/conversation-store.js';
import { StoreConflictError } from '../store/store-conflict-error.js';
import type { ThreadGeneration } from './thread-generation.js';
import type { ThreadLink } from './thread-link.js';
import { applyCountedChange } from './thread-size.js';

const TITLE_LENGTH = 80;

/**
 * What a change does to the thread's title: a first prompt names a thread that has no title yet (a title the user
 * gave is never replaced); a rename names it, whatever it was.
 */
export type Titling = { prompt: string } | { rename: string };

/** A commit refused because another node had committed first is planned again on the thread reloaded, this often. */
const COMMIT_ATTEMPTS = 3;

/** Commits the changes of one thread: to the store in one transaction, then to the live graph. */
export class ThreadCommitter {
  constructor(
    private readonly graph: ThreadGraph,
    private readonly record: ThreadRecord,
    private readonly store: ConversationStore,
    private readonly link: ThreadLink,
    private readonly generation: ThreadGeneration,
  ) {}

  /**
   * Plans a change, persists it, then applies it to the live graph, and tells the generation (see
   * `ThreadGeneration.committed`). When another node committed first, the change is planned again on the
   * thread reloaded (the plan checks again what it must). `planned`: the plan already made on the graph as it is.
   */
  async commit(plan: () => TreeChange, titling?: Titling, planned?: TreeChange): Promise<TreeChange> {
    let change: TreeChange;
    try {
      change = await this.commitPlanned(plan, titling, planned);
    } catch (error) {
      this.generation.abandon();
      throw error;
    }
    // A reload while the commit was on its way may have brought the change already.
    if (change.version > this.graph.version) applyCountedChange(this.graph, change);
    this.generation.committed(change, (nodeId) => getNode(this.graph, nodeId)?.status === 'streaming');
    return change;
  }

  /** The store's part of `commit`: planned again on the reloaded thread when another node committed first. */
  private async commitPlanned(
    plan: () => TreeChange,
    titling: Titling | undefined,
    planned: TreeChange | undefined,
  ): Promise<TreeChange> {
    for (let attempt = 1; ; attempt += 1) {
      const change = attempt === 1 && planned ? planned : plan();
      const title = titleAfter(titling, this.record.title);
      try {
        await this.link.confirmGeneration();
        await this.store.commit(change, { updatedAt: Date.now(), ...(title ? { title } : {}) });
      } catch (error) {
        if (!StoreConflictError.isInstance(error)) throw error;
        if (attempt < COMMIT_ATTEMPTS && (await this.caughtUp(change.baseVersion))) continue;
        throw new CPPError(ErrorCode.CONFLICT, error.message);
      }
      if (title) this.record.title = title;
      return change;
    }
  }

  /** Reloads the thread after a refused commit; true when it had moved on, so that planning again may succeed. */
  private async caughtUp(baseVersion: number): Promise<boolean> {
    await this.link.reload();
    return this.graph.version !== baseVersion;
  }
}

function titleAfter(titling: Titling | undefined, current: string): string | undefined {
  if (titling === undefined) return undefined;
  if ('rename' in titling) return titling.rename;
  return current === '' ? titleOf(titling.prompt) : undefined;
}

function titleOf(prompt: string): string {
  const title = prompt.replace(/\s+/g, ' ').trim();
  return title.slice(0, safeCutLength(title, TITLE_LENGTH));
}
