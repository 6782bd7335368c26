/**
 * WebSocket close codes a CPP server uses. The 4xxx codes mirror HTTP statuses, as graphql-ws does, so that their
 * meaning is guessable; documented in docs/PROTOCOL.md. Close reasons stay under 123 bytes.
 */
export const CloseCode = {
  /** Normal closure requested by either side. */
  NORMAL: 1000,
  /** The server is shutting down (or the client navigates away): reconnect, possibly elsewhere. */
  GOING_AWAY: 1001,
  /** A frame exceeded the hard size limit that the transport enforces before reading it. */
  MESSAGE_TOO_BIG: 1009,
  /** The identity could not be authenticated. */
  UNAUTHORIZED: 4401,
  /** The identity is not allowed to connect. */
  FORBIDDEN: 4403,
  /** The handshake or authentication did not finish in time, or the peer stopped answering pings. */
  TIMEOUT: 4408,
  /** Too many frames, connections or buffered bytes. */
  TOO_MANY_REQUESTS: 4429,
  /** An unexpected server failure that left the session unusable. */
  INTERNAL_ERROR: 4500,
} as const;

export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];
