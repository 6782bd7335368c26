import { GraphDraft } from './graph-draft.js';
import { addExchange, type ExchangeInput } from './exchange.js';
import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/**
 * A prompt under `parentNodeId`, or under the head when it is omitted (a first prompt, in an empty thread). A
 * `parentNodeId` of `null` makes it a first prompt beside the thread's others: the edit of a first prompt.
 */
export function planPrompt(graph: ThreadGraph, input: ExchangeInput & { parentNodeId?: string | null }): TreeChange {
  const draft = new GraphDraft(graph);
  const parentId = input.parentNodeId === undefined ? draft.head : input.parentNodeId;
  if (parentId !== null) draft.get(parentId);
  addExchange(draft, parentId, input);
  return draft.toChange();
}
