// What both entry points export besides their CPPClient.
export type {
  AnchorOptions,
  ContinueOptions,
  CPPClientOptions,
  DeleteBranchOptions,
  EditOptions,
  ExportFormat,
  ListThreadsOptions,
  PivotOptions,
  PromptOptions,
  RegenerateOptions,
  RenameOptions,
  SearchOptions,
  StopOptions,
  ToolApprovalOptions,
  ToolResultOptions,
  ClientToolHandler,
} from './client-options.js';
export type { AttachmentSource, AttachmentUploads, NamedBytes } from './attachment-upload.js';
export type { CPPClientEvents, GraphEvent } from './client-events.js';
export type { ConnectionStatus } from './reconnect.js';
export type { ReconnectOptions } from './reconnect-policy.js';
export { readImportFile, type ImportFile } from './import-file.js';
export { ThreadListMirror } from './thread-list-mirror.js';
export { ConnectionClosedError } from './connection-closed-error.js';
export { SendQueueFullError } from './send-queue-full-error.js';
export { ThreadClosedError } from './thread-closed-error.js';
export { CPPServerError } from './cpp-server-error.js';
export { DidKeyIdentity, type KeyOptions, type StoredIdentity } from './identity/did-key-identity.js';
export type { DidSigner } from './identity/did-signer.js';
export { browserIdentity, type BrowserIdentityOptions } from './identity/browser-identity.js';
export type { GenerationResult, GenerationStatus, SideBySideAnswer } from './generation.js';
export type { WebSocketConstructor, WebSocketLike } from './web-socket-like.js';
export {
  CPPError,
  ErrorCode,
  firstPrompts,
  type ImportFormat,
  type MessageNode,
  type SearchHit,
  type ThreadGraph,
  type ThreadSummary,
  type ThreadsFrame,
} from '@promethea/cpp-protocol';
