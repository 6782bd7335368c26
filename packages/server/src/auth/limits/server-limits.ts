/**
 * What one client may use of a server. Each limit has its own answer, listed in docs/PROTOCOL.md §20; 0 turns a
 * limit off. The frame size limit is `CPPServerOptions.maxFrameBytes`, older than these.
 */
export interface ServerLimits {
  /** Longest `userPrompt` of CPP_PROMPT and CPP_PIVOT_INIT, in UTF-16 code units: RATE_LIMITED beyond it. */
  maxPromptLength: number;
  /** Frames a connection may send per second, on average: RATE_LIMITED beyond, close 4429 if it keeps on. */
  framesPerSecond: number;
  /** Frames a connection may send at once before `framesPerSecond` paces it (a reconnect resends its queue). */
  frameBurst: number;
  /** Open connections from one IP address: HTTP 429 at the upgrade beyond it. */
  maxConnectionsPerIp: number;
  /**
   * TCP connections from one IP address to the server's own HTTP server, upgraded or not: one past it is closed as
   * it opens, before any request. Above `maxConnectionsPerIp`, which answers upgrades with 429, so that page loads and
   * upgrades in flight have room; it stops idle sockets that never send a request from using up the process's file
   * descriptors. Not counted behind a trusted proxy, whose address every connection has.
   */
  maxSocketsPerIp: number;
  /** Open connections of one DID: RATE_LIMITED and close 4429 once the identity is known. */
  maxConnectionsPerDid: number;
  /** Threads one DID may own: CPP_THREAD_OPEN creating one more is RATE_LIMITED. */
  maxThreadsPerDid: number;
  /** Members one thread may have beside its owner: CPP_MEMBER_ADD of one more is RATE_LIMITED. */
  maxMembersPerThread: number;
  /** Usable invites one thread may have at once: CPP_INVITE_CREATE of one more is RATE_LIMITED. */
  maxInvitesPerThread: number;
  /** Read-only share links one DID may have at once, across its threads: CPP_SHARE_LINK_CREATE of one more is RATE_LIMITED. */
  maxShareLinksPerDid: number;
  /** Nodes one thread may hold: a prompt or pivot that would pass it is RATE_LIMITED. */
  maxNodesPerThread: number;
  /**
   * Bytes of text (prompts and answers) one thread may hold, counted as a sync carries them: UTF-8 of the
   * JSON-escaped text, so a control character counts 6. A prompt or pivot that would pass it is RATE_LIMITED. It
   * bounds what one sync of the thread costs to build and to send.
   */
  maxThreadBytes: number;
  /** Full syncs (CPP_THREAD_OPEN, CPP_SYNC_REQUEST) one identity may ask for per minute, at most that many at once: RATE_LIMITED beyond. */
  syncsPerMinute: number;
  /** Searches (CPP_THREAD_SEARCH) one identity may make per minute, at most that many at once: RATE_LIMITED beyond. */
  searchesPerMinute: number;
  /** Answers one connection may have being written at once: a prompt, pivot or regenerate past it is RATE_LIMITED. */
  maxGenerationsPerConnection: number;
  /** Answers one identity may have being written at once, over all its connections: RATE_LIMITED past it. */
  maxGenerationsPerIdentity: number;
  /** Answers the whole server process may be writing at once: RATE_LIMITED past it. */
  maxGenerations: number;
  /** Time for the HTTP upgrade request to arrive whole (on the server's own HTTP server): HTTP 408 beyond it. */
  handshakeTimeoutMs: number;
  /** Time from the upgrade to an accepted proof, when one is required: close 4408 beyond it. */
  authTimeoutMs: number;
  /**
   * Time one message may take to arrive whole, from its first byte (a fragmented one from its first fragment):
   * close 4408 beyond it, so that a message held back unfinished cannot keep megabytes of the server's memory.
   */
  messageTimeoutMs: number;
  /** Time a connection may send no frame at all: close 4408 beyond it. */
  idleTimeoutMs: number;
}

/**
 * CPPServer's defaults: bounds on what a single frame or connection may cost, while counts that depend on the
 * deployment (connections per address or DID, threads per DID, idleness) are left to it. The CLI sets those too.
 */
export const DEFAULT_LIMITS: ServerLimits = {
  maxPromptLength: 100_000,
  framesPerSecond: 100,
  frameBurst: 200,
  maxConnectionsPerIp: 0,
  maxSocketsPerIp: 0,
  maxConnectionsPerDid: 0,
  maxThreadsPerDid: 0,
  maxMembersPerThread: 100,
  maxInvitesPerThread: 100,
  maxShareLinksPerDid: 100,
  maxNodesPerThread: 10_000,
  maxThreadBytes: 8 * 1024 * 1024,
  syncsPerMinute: 60,
  // The web UI searches as the person types, once per keystroke: 10 a second is faster than anyone types, and still
  // a tenth of what the frame rate would let a script send.
  searchesPerMinute: 600,
  maxGenerationsPerConnection: 0,
  maxGenerationsPerIdentity: 0,
  maxGenerations: 0,
  handshakeTimeoutMs: 10_000,
  authTimeoutMs: 10_000,
  messageTimeoutMs: 30_000,
  idleTimeoutMs: 0,
};
