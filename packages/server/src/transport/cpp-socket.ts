/**
 * The little the server needs of a WebSocket. The session is written against this, so that a transport other than
 * `ws` (or a test double) can carry CPP.
 */
export interface CPPSocket {
  /** `written` is called once the frame has left the socket's buffer (so `bufferedAmount` has dropped). */
  send(text: string, written?: () => void): void;
  /** Starts the closing handshake. */
  close(code: number, reason: string): void;
  /** Drops the connection at once, for a peer that does not finish the closing handshake. */
  terminate(): void;
  /**
   * Reads messages of at most `bytes` from now on, closing the connection with 1009 as soon as a frame header
   * announces more; without `bytes`, the transport's own limit applies again.
   */
  limitMessageBytes(bytes?: number): void;
  /** Bytes queued but not yet written to the network. */
  readonly bufferedAmount: number;
}

/** What a connection does with what arrives on its socket. */
export interface SocketHandlers {
  onMessage(data: string | Uint8Array, byteLength: number): void;
  onClose(): void;
}
