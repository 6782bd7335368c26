import { CPP_DID_QUERY_PARAMETER, CPP_SUBPROTOCOL, decodeServerFrameEnvelope } from '@promethea/cpp-protocol';
import type { CPPClientOptions } from './client-options.js';
import { CPPClient as CPPClientCore } from './cpp-client.js';
import { BROWSER_OPEN_FAILURE, OpenFailureSocket } from './open-failure-socket.js';
import { sessionUrl } from './session-url.js';
import type { WebSocketConstructor } from './web-socket-like.js';

/**
 * The browser client: the native WebSocket. Browsers cannot set headers on a WebSocket, so the DID travels as the
 * `did` query parameter instead of the X-Client-Sovereign-DID header. Nor can a page see why a socket failed to open,
 * and a failure says so. Server frames are checked as far as their envelope, which keeps zod out of the bundle.
 */
export class CPPClient extends CPPClientCore {
  constructor(options: CPPClientOptions) {
    const Socket = options.WebSocket ?? platformWebSocket();
    const openSocket = (endpoint: string, did: string | undefined) => {
      const url = sessionUrl(endpoint);
      if (did !== undefined) url.searchParams.set(CPP_DID_QUERY_PARAMETER, did);
      return new OpenFailureSocket(new Socket(url.href, CPP_SUBPROTOCOL), () => BROWSER_OPEN_FAILURE);
    };
    super(options, { openSocket, decodeServerFrame: decodeServerFrameEnvelope });
  }
}

function platformWebSocket(): WebSocketConstructor {
  const Socket = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!Socket) throw new TypeError('this platform has no global WebSocket: pass one as options.WebSocket');
  return Socket;
}

export * from './public-api.js';
