import type { AttachmentSource } from './attachment-upload.js';
import type { DidSigner } from './identity/did-signer.js';
import type { ReconnectOptions } from './reconnect-policy.js';
import type { WebSocketConstructor } from './web-socket-like.js';

export interface CPPClientOptions {
  /** The session URL, e.g. `wss://host/v1/cpp/session`; a bare `ws://host:port` gets the session path added. */
  endpoint: string;
  /**
   * Who the client is, proven to the server (docs/PROTOCOL.md §23.2): a signer such as a `DidKeyIdentity`
   * (`await DidKeyIdentity.generate()`, `await fileIdentity(path)` in Node), or a promise of one, which the client
   * waits for before it connects (`browserIdentity()`), or the 32-byte Ed25519 private key of a did:key (bytes, or
   * unpadded base64url). Required by servers in `did-key` mode.
   */
  identity?: DidSigner | Promise<DidSigner> | Uint8Array | string;
  /**
   * With `identity`: how long after the upgrade the server may take to challenge the client and accept its proof,
   * in milliseconds (default 10 000, the reference server's own limit). Past it the socket closes with 4408.
   */
  authTimeoutMs?: number;
  /**
   * How long the server may take to answer the WebSocket upgrade, from the moment the socket is opened, in
   * milliseconds (default 10 000). Past it the socket is closed and the attempt fails with ConnectionClosedError 1006:
   * a first connection ends, an attempt after a loss is retried like any other that failed.
   */
  connectTimeoutMs?: number;
  /**
   * The DID the client claims without proving it, recorded by a server in `claimed` mode as the owner of the threads
   * it creates. With `identity`, the identity's DID (leave this out).
   */
  did?: string;
  /** The WebSocket implementation; by default the platform's (`ws` in Node, the native one in browsers). */
  WebSocket?: WebSocketConstructor;
  /** Receive CPP_GRAPH_PATCH (only what changed) instead of a full CPP_SYNC_GRAPH after each change. Default true. */
  patches?: boolean;
  /** Ask for who else has each thread open (CPP_PRESENCE, PROTOCOL.md §29.9): see `presence()`. Default true. */
  presence?: boolean;
  /**
   * Handlers of the tools that run on the client (PROTOCOL.md §26.10), by name: a call of one in a thread this
   * client has open is run with its input, and what the handler returns (a string as it is, anything else as JSON)
   * or throws is sent back as the call's output or error.
   */
  tools?: Record<string, ClientToolHandler>;
  /**
   * Reconnect after an established connection is lost, re-open the threads and resume (default `true`, with the
   * defaults of `ReconnectOptions`); `false` turns it off: the first loss closes the client.
   */
  reconnect?: boolean | ReconnectOptions;
  /** How many frames may wait while the client is not connected; past it a request fails with SendQueueFullError. Default 100. */
  maxQueuedFrames?: number;
}

export interface PromptOptions {
  userPrompt: string;
  /**
   * Files the prompt carries (PROTOCOL.md §27): a `File` or `Blob`, `{ name, bytes }`, a path in Node, or an
   * attachment `(await client.attachments()).upload(…)` gave back. Each is uploaded before the prompt is sent.
   */
  attachments?: readonly AttachmentSource[];
  /** Default: the active thread, opened (or created) first when there is none. */
  threadId?: string;
  /** Default: the thread's head. `null`: a first prompt beside the thread's others (an edit of its first prompt). */
  parentNodeId?: string | null;
  /** Refuse with CONFLICT if the thread has changed since this version. */
  expectedVersion?: number;
  /** The id of the model to answer with, one of `listModels()`; default: the server's default model. */
  model?: string;
  /**
   * Several models to answer side by side, one answer each, in this order (PROTOCOL.md §30): 1–4 ids of
   * `listModels()`, instead of `model`. The result's `answers` then holds each one's; `onStream` follows the first.
   */
  models?: readonly string[];
  /** Each piece of the answer's text, in order, as it streams. */
  onStream?: (delta: string) => void;
  /** Each piece of the model's reasoning, in order, as it streams (PROTOCOL.md §11.5). */
  onReasoning?: (delta: string) => void;
}

export interface PivotOptions {
  userPrompt: string;
  /**
   * The streaming answer to branch under, when several models answer side by side (PROTOCOL.md §30.3): all of them
   * halt, and the new prompt goes under this one. Default: the first of them.
   */
  nodeId?: string;
  /** Files the new prompt carries, as for `prompt`. */
  attachments?: readonly AttachmentSource[];
  threadId?: string;
  /** How much of the interrupted node the user has seen; default: all that this client holds of it. */
  receivedContentLength?: number;
  /** How much of the interrupted node's reasoning the user has seen; default: all that this client holds of it. */
  receivedReasoningLength?: number;
  /** Refuse with CONFLICT if the thread has changed since this version (CPP_PIVOT_INIT's `expectedVersion`). */
  expectedVersion?: number;
  /** The id of the model to answer the new prompt with; default: the server's default model. */
  model?: string;
  /**
   * Several models to answer side by side, one answer each, in this order (PROTOCOL.md §30): 1–4 ids of
   * `listModels()`, instead of `model`. The result's `answers` then holds each one's; `onStream` follows the first.
   */
  models?: readonly string[];
  onStream?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

export interface RegenerateOptions {
  /**
   * The answer to write again, or the user node to answer again; default: the thread's head. The new answer goes
   * beside the user node's earlier answers.
   */
  nodeId?: string;
  threadId?: string;
  /** When an answer of that user node streams: how much of it the user has seen; default: all this client holds. */
  receivedContentLength?: number;
  /** Likewise for that answer's reasoning. */
  receivedReasoningLength?: number;
  expectedVersion?: number;
  /** The id of the model to write the new answer; default: the server's default model. */
  model?: string;
  /**
   * Several models to answer side by side, one answer each, in this order (PROTOCOL.md §30): 1–4 ids of
   * `listModels()`, instead of `model`. The result's `answers` then holds each one's; `onStream` follows the first.
   */
  models?: readonly string[];
  onStream?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

export interface ContinueOptions {
  /** The interrupted or failed answer to go on with; default: the thread's head. */
  nodeId?: string;
  threadId?: string;
  /** Recommended: a continue sent again after its continuation ended is then CONFLICT, not a second continuation. */
  expectedVersion?: number;
  /** The id of the model to go on with; default: the node's own model when the server still offers it. */
  model?: string;
  /** Each piece of text that follows the node's text, in order, as it streams. */
  onStream?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

export interface EditOptions {
  /** The user node to edit: the edited prompt goes beside it, under the same parent, and is answered. */
  nodeId: string;
  userPrompt: string;
  /** Files the edited prompt carries, as for `prompt` (the edited node's own are not carried over by themselves). */
  attachments?: readonly AttachmentSource[];
  threadId?: string;
  expectedVersion?: number;
  /** The id of the model to answer the edited prompt with; default: the server's default model, as for a prompt. */
  model?: string;
  /**
   * Several models to answer side by side, one answer each, in this order (PROTOCOL.md §30): 1–4 ids of
   * `listModels()`, instead of `model`. The result's `answers` then holds each one's; `onStream` follows the first.
   */
  models?: readonly string[];
  onStream?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

export interface DeleteBranchOptions {
  threadId?: string;
  expectedVersion?: number;
}

export interface AnchorOptions {
  threadId?: string;
  expectedVersion?: number;
}

export interface RenameOptions {
  threadId?: string;
  expectedVersion?: number;
}

export interface SearchOptions {
  /** 1–50 hits; the server's default is 20. */
  limit?: number;
}

/** Which page of the thread list (PROTOCOL.md §6.3). */
export interface ListThreadsOptions {
  /** 1–200 threads; the server's default is 50. */
  limit?: number;
  /** The `nextCursor` of the page before; absent: the first page. */
  cursor?: string;
  /**
   * `true`: the server tells this connection of every thread created, changed (`threadUpdated`) or deleted
   * (`threadDeleted`) from now on; `false`: no longer. A subscription ends with its connection: list again with
   * `subscribe: true` when the status is `open` again, as `useThreads` does.
   */
  subscribe?: boolean;
}

/** `cpp-thread`: the whole tree as CPP JSON; `markdown`: the active branch (PROTOCOL.md §25.4). */
export type ExportFormat = 'cpp-thread' | 'markdown';

/** Runs a call of a tool that runs on the client: `input` is the call's input, parsed. */
export type ClientToolHandler = (
  input: unknown,
  call: { threadId: string; nodeId: string; toolCallId: string },
) => unknown;

/** A person's answer to a tool call that waits for approval (PROTOCOL.md §26.9). */
export interface ToolApprovalOptions {
  /** The streaming answer that made the call. */
  nodeId: string;
  toolCallId: string;
  approved: boolean;
  /** Why, in the person's words; the model is told it with a denial. */
  reason?: string;
  /** Default: the active thread. */
  threadId?: string;
}

/** A client's answer to a call of a tool that runs on a client (PROTOCOL.md §26.10): its output or its error. */
export type ToolResultOptions = {
  /** The streaming answer that made the call. */
  nodeId: string;
  toolCallId: string;
  /** Default: the active thread. */
  threadId?: string;
} & ({ output: unknown } | { errorText: string });

export interface StopOptions {
  threadId?: string;
  /**
   * The answer to stop, when several models answer side by side (PROTOCOL.md §30.3); default: every answer
   * streaming in the thread, each cut at what this client holds of it.
   */
  nodeId?: string;
  /** How much of the stopped node the user has seen; default: all that this client holds of it. */
  receivedContentLength?: number;
  /** How much of its reasoning the user has seen; default: all that this client holds of it. */
  receivedReasoningLength?: number;
}
