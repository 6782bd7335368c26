import type { WebSocketLike } from './web-socket-like.js';
import { WrappingSocket } from './wrapping-socket.js';

/**
 * A session socket whose failure to open says why, as far as the platform lets the client know: a socket that closes
 * before it opened, with no reason of its own, is reported closed with `explain()` as its reason. A WebSocket that
 * never opened closes with 1006 and an empty reason on every platform, which tells a developer nothing.
 */
export class OpenFailureSocket extends WrappingSocket {
  private opened = false;

  constructor(socket: WebSocketLike, explain: () => string) {
    super(socket);
    socket.addEventListener('open', () => {
      this.opened = true;
      this.emit('open', undefined);
    });
    socket.addEventListener('message', (event) => this.emit('message', event));
    socket.addEventListener('error', () => this.emit('error', undefined));
    socket.addEventListener('close', (event) => {
      this.emit('close', this.opened || event.reason !== '' ? event : { code: event.code, reason: explain() });
    });
  }
}

/** Why a browser's socket failed to open is all a page may know: the browser keeps the HTTP answer to itself. */
export const BROWSER_OPEN_FAILURE =
  'the WebSocket failed before it opened, and browsers do not tell a page why: the server may be unreachable, or may ' +
  "have refused the upgrade (the developer tools' network panel shows its HTTP status and body)";
