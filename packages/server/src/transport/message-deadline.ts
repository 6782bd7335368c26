import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/**
 * What ws's receiver holds of a message not yet whole: the payload announced by the frame headers read so far, and
 * the bytes not yet parsed. Private fields of ws 8, read only here (the transport tests check them).
 */
interface WithReceiver {
  _receiver?: { _totalPayloadLength: number; _bufferedBytes: number };
}

/**
 * Closes with 4408 a connection whose message takes longer than `timeoutMs` to arrive whole: its first fragment (or
 * its header) sent, the rest held back while pongs keep the connection alive, a message holds up to the hard limit
 * (8 MiB) of the server's memory for as long as its sender likes. The clock starts when bytes of a message are
 * waiting and is checked every `timeoutMs`: a message still incomplete at a check, with none completed since the
 * previous one, has taken longer than `timeoutMs` (and at most twice that).
 */
export function watchMessageTime(webSocket: WebSocket, stream: Duplex, timeoutMs: number): void {
  if (timeoutMs <= 0) return;
  let completed = 0;
  let completedAtStart = 0;
  let timer: NodeJS.Timeout | undefined;
  const receiving = () => {
    const receiver = (webSocket as unknown as WithReceiver)._receiver;
    return receiver !== undefined && (receiver._totalPayloadLength > 0 || receiver._bufferedBytes > 0);
  };
  const start = () => {
    completedAtStart = completed;
    timer = setTimeout(check, timeoutMs);
    // A connection's clock never keeps the process alive on its own.
    timer.unref();
  };
  const check = () => {
    timer = undefined;
    if (!receiving() || webSocket.readyState !== webSocket.OPEN) return;
    if (completed !== completedAtStart) return start();
    webSocket.close(4408, 'a message took too long to arrive');
  };
  // Registered after ws's own listener: the receiver has taken the bytes by the time this one runs.
  stream.on('data', () => {
    if (timer === undefined && receiving()) start();
  });
  webSocket.on('message', () => {
    completed += 1;
  });
  webSocket.on('close', () => clearTimeout(timer));
}
