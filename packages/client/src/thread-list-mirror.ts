import type { ThreadSummary, ThreadsFrame } from '@promethea/cpp-protocol';

/**
 * A client's copy of the thread list, from its pages and the list's updates (PROTOCOL.md §7.11): of two summaries
 * of one thread the greater version wins, a thread told deleted stays out, and the threads keep the server's order
 * (most recently updated first, ties by greater id). Updates and pages may arrive in any order with each other.
 */
export class ThreadListMirror {
  /** Ordered as the server orders the list. */
  private ordered: ThreadSummary[] = [];
  private readonly deleted = new Set<string>();
  /** The cursor of the next page; `null` once the last page is in; `undefined` before the first. */
  private cursor: string | null | undefined;

  get threads(): readonly ThreadSummary[] {
    return this.ordered;
  }

  /** The `cursor` that asks for the next page; `undefined` before the first page and after the last. */
  get nextCursor(): string | undefined {
    return this.cursor ?? undefined;
  }

  /** Whether the server has threads after those loaded: false also before the first page. */
  get hasMore(): boolean {
    return typeof this.cursor === 'string';
  }

  /** Starts again from nothing: the next page to add is a first page. Deletions are remembered (ids are never reused). */
  reset(): void {
    this.ordered = [];
    this.cursor = undefined;
  }

  /** Adds a page of `CPP_THREADS`. */
  addPage({ threads, nextCursor }: ThreadsFrame['payload']): void {
    for (const thread of threads) this.merge(thread);
    this.cursor = nextCursor;
  }

  /** A `CPP_THREAD_UPDATED`; false when it told nothing new. */
  update(thread: ThreadSummary): boolean {
    return this.merge(thread);
  }

  /** A `CPP_THREAD_DELETED`; false when the thread was not in the list. */
  remove(threadId: string): boolean {
    this.deleted.add(threadId);
    const index = this.ordered.findIndex((thread) => thread.threadId === threadId);
    if (index < 0) return false;
    this.ordered = withoutAt(this.ordered, index);
    return true;
  }

  private merge(thread: ThreadSummary): boolean {
    if (this.deleted.has(thread.threadId)) return false;
    const index = this.ordered.findIndex((known) => known.threadId === thread.threadId);
    const known = index < 0 ? undefined : this.ordered[index];
    if (known && known.version >= thread.version) return false;
    const without = index < 0 ? this.ordered : withoutAt(this.ordered, index);
    const at = insertionPoint(without, thread);
    this.ordered = [...without.slice(0, at), thread, ...without.slice(at)];
    return true;
  }
}

/** A new array each time: a view that compares references sees every change. */
function withoutAt(ordered: readonly ThreadSummary[], index: number): ThreadSummary[] {
  return [...ordered.slice(0, index), ...ordered.slice(index + 1)];
}

/** Where `thread` goes in the ordered list, found by halving. */
function insertionPoint(ordered: readonly ThreadSummary[], thread: ThreadSummary): number {
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (comesBefore(ordered[middle]!, thread)) low = middle + 1;
    else high = middle;
  }
  return low;
}

function comesBefore(a: ThreadSummary, b: ThreadSummary): boolean {
  return a.updatedAt > b.updatedAt || (a.updatedAt === b.updatedAt && a.threadId > b.threadId);
}
