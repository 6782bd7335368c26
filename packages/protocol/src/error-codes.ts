/**
 * The closed set of `CPP_ERROR` codes. Each is documented in docs/PROTOCOL.md; a failure of one operation is an
 * error frame, and the connection stays usable.
 */
export const ErrorCode = {
  /** The text was not JSON (or nested deeper than 32 levels), or was a binary frame. */
  BAD_FRAME: 'BAD_FRAME',
  /** The frame parsed but a field is missing, mistyped or out of range. */
  INVALID_FRAME: 'INVALID_FRAME',
  /** The `type` is not a client frame of this protocol version. */
  UNKNOWN_TYPE: 'UNKNOWN_TYPE',
  /** The frame is larger than the server's limit (default 1 MiB). */
  FRAME_TOO_LARGE: 'FRAME_TOO_LARGE',
  /** A thread or node id does not exist, belongs to another thread, or names another identity's thread. */
  NOT_FOUND: 'NOT_FOUND',
  /** A stale `expectedVersion`, or a new node id already used by a different request. */
  CONFLICT: 'CONFLICT',
  /** A generation is already running in the thread: pivot it instead. */
  THREAD_BUSY: 'THREAD_BUSY',
  /** `CPP_STREAM_STOP` named a node that is not streaming. */
  NOT_STREAMING: 'NOT_STREAMING',
  /**
   * The node exists but the operation does not apply to it: regenerating an assistant node, deleting the root,
   * continuing a node that is not an interrupted or failed answer without children.
   */
  INVALID_NODE: 'INVALID_NODE',
  /** CPP_PROMPT, CPP_PIVOT_INIT, CPP_REGENERATE or CPP_CONTINUE named a model that CPP_MODELS does not list. */
  UNKNOWN_MODEL: 'UNKNOWN_MODEL',
  /**
   * The least an answer's model must read (the branch's first prompt and the turn it answers, with the room reserved
   * for its answer) does not fit in the model's context window; nothing was changed and the model was not called.
   */
  CONTEXT_TOO_LONG: 'CONTEXT_TOO_LONG',
  /** The model provider failed; the assistant node is `failed` with its partial text kept. */
  PROVIDER_ERROR: 'PROVIDER_ERROR',
  /** The identity is missing or not proven. */
  UNAUTHORIZED: 'UNAUTHORIZED',
  /** CPP_THREAD_OPEN named another identity's thread, which can be neither opened nor created. */
  FORBIDDEN: 'FORBIDDEN',
  /** A rate or size limit was reached. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** An upload is larger than the server takes (docs/PROTOCOL.md §27.6). */
  ATTACHMENT_TOO_LARGE: 'ATTACHMENT_TOO_LARGE',
  /** An upload's bytes are not of a type the server takes, or are an image too large in pixels (§27.3). */
  UNSUPPORTED_ATTACHMENT: 'UNSUPPORTED_ATTACHMENT',
  /** The server failed; nothing was changed. */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const ERROR_CODES = Object.values(ErrorCode) as readonly ErrorCode[];
