import { GraphDraft } from './graph-draft.js';
import type { ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/** Moves the head pointer to any node of the thread; the next prompt without a parent branches from there. */
export function planAnchor(graph: ThreadGraph, targetNodeId: string): TreeChange {
  const draft = new GraphDraft(graph);
  draft.setHead(targetNodeId);
  return draft.toChange();
}
