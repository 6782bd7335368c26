import type { WebSocketLike } from '../web-socket-like.js';
import { WrappingSocket } from '../wrapping-socket.js';

/** What a socket that could not open reports (RFC 6455 §7.1.5); never sent, as there was no connection to send it on. */
const ABNORMAL_CLOSURE = 1006;

/**
 * The first session socket of a client whose identity is still being loaded (a promise, such as `browserIdentity()`
 * or a raw private key being imported): the socket is opened once the identity is there, since the upgrade claims
 * its DID. An identity that fails to load is reported as a socket that could not open, with the reason; a close
 * before then is reported at once, and the socket is never opened.
 */
export class PendingIdentitySocket extends WrappingSocket {
  private closed = false;

  constructor(socket: Promise<WebSocketLike>) {
    super({
      send: () => {
        throw new Error('the CPP socket is not open');
      },
      close: () => this.fail('closed by the client before the identity was loaded'),
      addEventListener: () => undefined,
    });
    socket.then(
      (opened) => this.opened(opened),
      (error: unknown) =>
        this.fail(`the identity could not be loaded: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  private opened(socket: WebSocketLike): void {
    if (this.closed) return socket.close();
    this.socket = socket;
    socket.addEventListener('open', () => this.emit('open', undefined));
    socket.addEventListener('message', (event) => this.emit('message', event));
    socket.addEventListener('close', (event) => this.emit('close', event));
    socket.addEventListener('error', () => this.emit('error', undefined));
  }

  private fail(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close', { code: ABNORMAL_CLOSURE, reason });
  }
}
