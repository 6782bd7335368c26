import type { ThreadSummary } from '@promethea/cpp-protocol';

export interface ThreadGroup {
  label: 'Today' | 'Previous 7 days' | 'Older';
  threads: ThreadSummary[];
}

const DAY_MS = 86_400_000;

/** Threads by when they last changed, as chat apps list them: today (local time), the 7 days before, older. */
export function groupThreads(threads: readonly ThreadSummary[], now: number): ThreadGroup[] {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  const today = midnight.getTime();
  const groups: ThreadGroup[] = [
    { label: 'Today', threads: [] },
    { label: 'Previous 7 days', threads: [] },
    { label: 'Older', threads: [] },
  ];
  for (const thread of threads) {
    const group = thread.updatedAt >= today ? 0 : thread.updatedAt >= today - 7 * DAY_MS ? 1 : 2;
    groups[group]!.threads.push(thread);
  }
  return groups.filter((group) => group.threads.length > 0);
}

/**
 * The thread that takes a deleted thread's place in the list (most recent first): the one after it, or the one before
 * when it was the last; `undefined` when it was the only one.
 */
export function threadAfterDeletion(threads: readonly ThreadSummary[], deletedId: string): string | undefined {
  const index = threads.findIndex((thread) => thread.threadId === deletedId);
  if (index === -1) return threads[0]?.threadId;
  return (threads[index + 1] ?? threads[index - 1])?.threadId;
}

/** A snippet cut into pieces, those that begin with a term of the query marked (as search matches words). */
export function markTerms(snippet: string, terms: readonly string[]): Array<{ text: string; marked: boolean }> {
  if (terms.length === 0) return [{ text: snippet, marked: false }];
  const pieces: Array<{ text: string; marked: boolean }> = [];
  let last = 0;
  for (const word of snippet.matchAll(/[\p{L}\p{N}]+/gu)) {
    const lower = word[0].toLowerCase();
    const term = terms.find((candidate) => lower.startsWith(candidate));
    if (!term) continue;
    if (word.index > last) pieces.push({ text: snippet.slice(last, word.index), marked: false });
    // The part of the word the term matched ("piv" of "pivots").
    pieces.push({ text: word[0].slice(0, term.length), marked: true });
    last = word.index + term.length;
  }
  if (last < snippet.length) pieces.push({ text: snippet.slice(last), marked: false });
  return pieces;
}
