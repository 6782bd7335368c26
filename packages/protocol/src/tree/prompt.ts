import { GraphDraft } from './graph-draft.js';
import { addExchange, type ExchangeInput } from './exchange.js';
import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/** A prompt under `parentNodeId`, or under the head when it is omitted (the root, in an empty thread). */
export function planPrompt(graph: ThreadGraph, input: ExchangeInput & { parentNodeId?: string }): TreeChange {
  const draft = new GraphDraft(graph);
  const parentId = input.parentNodeId ?? draft.head;
  if (parentId !== null) draft.get(parentId);
  addExchange(draft, parentId, input);
  return draft.toChange();
}
