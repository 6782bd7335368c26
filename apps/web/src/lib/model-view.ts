import type { BranchEntry } from '@promethea/cpp-react';

/** What the branch's latest answer was written without (docs/PROTOCOL.md §28.3), when its model did not read it all. */
export interface OutsideModelView {
  /** The messages after the first prompt that the model did not read. */
  unseenIds: ReadonlySet<string>;
  /** The first message it read again after them: the rule goes above it. */
  resumesAtId: string;
  /** The summary of them the model read in their place (docs/PROTOCOL.md §28.5), when its server summarises. */
  summary: string | undefined;
}

/**
 * The messages of the shown branch that its latest answer's model did not read, to fit its context window: those
 * between the first prompt and the answer's `context.fromNodeId`. Undefined when it read the whole branch.
 */
export function outsideModelView(entries: readonly BranchEntry[]): OutsideModelView | undefined {
  const context = entries.findLast((entry) => entry.node.role === 'assistant')?.node.context;
  if (!context) return undefined;
  const resumesAt = entries.findIndex((entry) => entry.node.id === context.fromNodeId);
  if (resumesAt < 2) return undefined;
  return {
    unseenIds: new Set(entries.slice(1, resumesAt).map((entry) => entry.node.id)),
    resumesAtId: context.fromNodeId,
    summary: context.summary,
  };
}
