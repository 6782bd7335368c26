/**
 * The part of a WebSocket the client uses. Both the browser's native `WebSocket` and the `ws` package satisfy it,
 * so the client core never imports either.
 */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

/** `ws` takes a third argument (request headers); a browser's `WebSocket` ignores it. */
export interface WebSocketConstructor {
  new (url: string, protocols: string | string[], options?: { headers?: Record<string, string> }): WebSocketLike;
}

/** How an entry point opens the session socket and presents the client's DID (a header, or the query string). */
export type SocketOpener = (endpoint: string, did: string | undefined) => WebSocketLike;
