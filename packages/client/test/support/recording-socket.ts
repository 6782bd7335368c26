import type { WebSocketConstructor } from '@promethea/cpp-client';
import { decodeServerFrame, type ServerFrame } from '@promethea/cpp-protocol';
import WebSocket from 'ws';

/** A `ws` WebSocket class for the client's `WebSocket` option that records every valid frame its sockets receive. */
export function recordingWebSocket(): { WebSocket: WebSocketConstructor; received: ServerFrame[] } {
  const received: ServerFrame[] = [];
  class RecordingWebSocket extends WebSocket {
    constructor(url: string, protocols: string | string[], options?: { headers?: Record<string, string> }) {
      super(url, protocols, options);
      this.addEventListener('message', (event) => {
        const decoded = typeof event.data === 'string' ? decodeServerFrame(event.data) : undefined;
        if (decoded?.ok) received.push(decoded.frame);
      });
    }
  }
  return { WebSocket: RecordingWebSocket, received };
}
