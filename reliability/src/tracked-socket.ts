import WebSocket from 'ws';
import type { WebSocketConstructor } from '@promethea/cpp-client/node';

/** A `ws` WebSocket class that hands every socket it makes to `created`, so that a test can cut it later. */
export function trackedSocket(created: (socket: WebSocket) => void): WebSocketConstructor {
  return class TrackedSocket extends WebSocket {
    constructor(url: string, protocols: string | string[], options?: WebSocket.ClientOptions) {
      super(url, protocols, options);
      created(this);
    }
  };
}
