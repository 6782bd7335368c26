import type { Duplex } from 'node:stream';
import { CloseCode } from '@promethea/cpp-protocol';
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
  const clock = new MessageClock(webSocket, timeoutMs);
  clocks.set(stream, clock);
  clocks.set(webSocket, clock);
  // Registered after ws's own listener: the receiver has taken the bytes by the time this one runs.
  stream.on('data', onData);
  webSocket.on('message', onMessage);
  webSocket.on('close', onClose);
}

/**
 * Each connection's clock, found by its stream and its WebSocket. The listeners are the same functions for every
 * connection (an emitter calls its listener with itself as `this`): six closures per connection were ~400 bytes of
 * every idle connection (issue 20).
 */
const clocks = new WeakMap<Duplex | WebSocket, MessageClock>();

function onData(this: Duplex): void {
  const clock = clocks.get(this);
  if (clock && clock.timer === undefined && clock.receiving()) clock.start();
}

function onMessage(this: WebSocket): void {
  const clock = clocks.get(this);
  if (clock) clock.completed += 1;
}

function onClose(this: WebSocket): void {
  clearTimeout(clocks.get(this)?.timer);
}

class MessageClock {
  completed = 0;
  private completedAtStart = 0;
  timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly webSocket: WebSocket,
    private readonly timeoutMs: number,
  ) {}

  /** Bytes of a message are waiting in ws's receiver. */
  receiving(): boolean {
    const receiver = (this.webSocket as unknown as WithReceiver)._receiver;
    return receiver !== undefined && (receiver._totalPayloadLength > 0 || receiver._bufferedBytes > 0);
  }

  start(): void {
    this.completedAtStart = this.completed;
    this.timer = setTimeout(checkClock, this.timeoutMs, this);
    // A connection's clock never keeps the process alive on its own.
    this.timer.unref();
  }

  check(): void {
    this.timer = undefined;
    if (!this.receiving() || this.webSocket.readyState !== this.webSocket.OPEN) return;
    if (this.completed !== this.completedAtStart) return this.start();
    this.webSocket.close(CloseCode.TIMEOUT, 'a message took too long to arrive');
  }
}

function checkClock(clock: MessageClock): void {
  clock.check();
}
