import { ErrorCode, type DecodeFailure, type ServerFrame } from '@promethea/cpp-protocol';
import type { ClientPlatform } from './client-platform.js';
import { ConnectionClosedError } from './connection-closed-error.js';
import type { WebSocketLike } from './web-socket-like.js';

export interface ConnectionHandlers {
  open(): void;
  frame(frame: ServerFrame): void;
  invalidFrame(failure: DecodeFailure): void;
  /** The socket closed, or never opened. */
  close(error: ConnectionClosedError): void;
}

/** One session socket. Every text it receives is decoded and validated here, the client's one edge. */
export class Connection {
  constructor(
    private readonly socket: WebSocketLike,
    handlers: ConnectionHandlers,
    decode: ClientPlatform['decodeServerFrame'],
  ) {
    socket.addEventListener('open', () => handlers.open());
    socket.addEventListener('close', (event) => handlers.close(new ConnectionClosedError(event.code, event.reason)));
    socket.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') {
        handlers.invalidFrame({ ok: false, code: ErrorCode.BAD_FRAME, message: 'server sent a binary frame' });
        return;
      }
      const decoded = decode(event.data);
      if (decoded.ok) handlers.frame(decoded.frame);
      else handlers.invalidFrame(decoded);
    });
    // A socket error is always followed by 'close', which settles everything; `ws` needs a listener regardless.
    socket.addEventListener('error', () => undefined);
  }

  /** Only once open. */
  send(text: string): void {
    this.socket.send(text);
  }

  close(code: number, reason?: string): void {
    this.socket.close(code, reason);
  }
}
