import type { WebSocketLike } from './web-socket-like.js';
import { WrappingSocket } from './wrapping-socket.js';

/**
 * What a socket whose connection failed reports (RFC 6455 §7.1.5: closed without a closing handshake). It is never
 * sent: a socket given up on before its upgrade was answered has no WebSocket connection to send it on.
 */
const ABNORMAL_CLOSURE = 1006;
/** How long, from opening the socket, the server may take to answer the upgrade. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A session socket that gives up on a connection not open `timeoutMs` after it was started: a server, or a proxy
 * that black-holes it, may accept the TCP connection and never answer the upgrade, which would leave the client
 * connecting without end. The socket is closed, and reported closed at once with 1006 and a reason, as a
 * connection that failed; whatever the socket does afterwards is not passed on.
 */
export class ConnectDeadlineSocket extends WrappingSocket {
  private gaveUp = false;

  constructor(socket: WebSocketLike, timeoutMs: number) {
    super(socket);
    const deadline = setTimeout(() => this.giveUp(), timeoutMs);
    socket.addEventListener('open', () => {
      clearTimeout(deadline);
      if (!this.gaveUp) this.emit('open', undefined);
    });
    socket.addEventListener('message', (event) => {
      if (!this.gaveUp) this.emit('message', event);
    });
    socket.addEventListener('close', (event) => {
      clearTimeout(deadline);
      if (!this.gaveUp) this.emit('close', event);
    });
    socket.addEventListener('error', () => {
      if (!this.gaveUp) this.emit('error', undefined);
    });
  }

  /** Closed without a code: a browser refuses 1006 from a script, and a socket still connecting sends none anyway. */
  private giveUp(): void {
    this.gaveUp = true;
    this.socket.close();
    this.emit('close', { code: ABNORMAL_CLOSURE, reason: 'the server did not answer the upgrade in time' });
  }
}
