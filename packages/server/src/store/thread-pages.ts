import type { ThreadSummary } from '@promethea/cpp-protocol';
import type { ThreadPosition } from './conversation-store.js';

/**
 * One page of an identity's threads from a page of its own and a page of those shared with it, each already in the
 * list's order and at most `limit` long: the first `limit` of both in that order. A shared summary keeps its `role`.
 */
export function mergeThreadPages(
  own: readonly ThreadSummary[],
  shared: readonly ThreadSummary[],
  limit: number,
): ThreadSummary[] {
  return [...own, ...shared].sort(byListOrder).slice(0, limit);
}

/** The list's order: most recently updated first, ties greater thread id first. */
export function byListOrder(a: ThreadPosition, b: ThreadPosition): number {
  if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
  return a.threadId < b.threadId ? 1 : a.threadId > b.threadId ? -1 : 0;
}
