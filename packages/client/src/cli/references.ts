import type { ThreadGraph, ThreadSummary } from '@promethea/cpp-protocol';
import { treeOrder } from './format-tree.js';

/**
 * The node a person means by `reference`: its number in `/tree`, or its id or the start of one, if only that node's id
 * starts so. Throws, in words, when none or several match.
 */
export function resolveMessage(graph: ThreadGraph, reference: string): string {
  const ids = treeOrder(graph).map((line) => line.node.id);
  return resolve(ids, reference, 'message', '/tree');
}

/** The thread a person means by `reference`: its number in `/threads`, or the start of its id; undefined if none. */
export function resolveThread(threads: ThreadSummary[], reference: string): string | undefined {
  const ids = threads.map((thread) => thread.threadId);
  const numbered = /^\d+$/.test(reference);
  if (!numbered && !ids.some((id) => id.startsWith(reference))) return undefined;
  return resolve(ids, reference, 'thread', '/threads');
}

function resolve(ids: string[], reference: string, kind: string, listing: string): string {
  if (/^\d+$/.test(reference)) {
    const id = ids[Number(reference) - 1];
    if (id === undefined)
      throw new Error(`there is no ${kind} ${reference}: ${listing} numbers them 1 to ${ids.length}`);
    return id;
  }
  if (ids.includes(reference)) return reference;
  const matches = ids.filter((id) => id.startsWith(reference));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new Error(`no ${kind} id starts with ${reference}: ${listing} lists them`);
  throw new Error(
    `${matches.length} ${kind} ids start with ${reference} (${matches.slice(0, 3).join(', ')}${matches.length > 3 ? ', …' : ''}): type more of it, or its number in ${listing}`,
  );
}
