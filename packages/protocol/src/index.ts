export * from './constants.js';
export * from './ids.js';
export * from './error-codes.js';
export * from './close-codes.js';
export * from './cpp-error.js';
export * from './text.js';
export * from './node.js';
export * from './attachment.js';
export * from './attachment-types.js';
export * from './envelope.js';
export * from './identity/did.js';
export * from './identity/encodings.js';
export * from './identity/did-key.js';
export * from './identity/auth-statement.js';
export * from './frames/auth-frames.js';
export * from './frames/client-frames.js';
export * from './frames/server-frames.js';
export * from './frames/frame-types.js';
export * from './frames/frame-envelope.js';
export * from './frames/frame-codec.js';
export * from './frames/json-schema.js';
export * from './frames/json-schema-files.js';
export {
  emptyGraph,
  firstPrompts,
  getNode,
  rootOf,
  streamingNode,
  streamingNodes,
  type ThreadGraph,
} from './tree/thread-graph.js';
export type { HaltedAnswer } from './tree/halted.js';
export * from './tree/tree-change.js';
export * from './tree/graph-draft.js';
export * from './tree/exchange.js';
export * from './tree/prompt.js';
export * from './tree/pivot-splice.js';
export * from './tree/anchor.js';
export * from './tree/regenerate.js';
export * from './tree/continue.js';
export * from './tree/branch-delete.js';
export * from './tree/rename.js';
export * from './tree/finish.js';
export * from './tree/path.js';
export * from './tree/invariants.js';
export * from './tree/mirror.js';
export * from './tree/text-parts.js';
export * from './tree/tool-calls.js';
export * from './threads/search-terms.js';
export * from './threads/thread-list-page.js';
export * from './threads/thread-export.js';
export * from './threads/thread-export-schema.js';
export * from './threads/thread-import.js';
export * from './threads/import-format.js';
