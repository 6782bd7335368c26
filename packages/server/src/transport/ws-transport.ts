import type { IncomingMessage, Server as HttpServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import type { RawData, ServerOptions, WebSocket } from 'ws';
import { UpgradeRefusal } from '../auth/upgrade-refusal.js';
import type { CPPSocket, SocketHandlers } from './cpp-socket.js';
import { openHosted, SHUT_DOWN, SUBPROTOCOL_REQUIRED, UNDECIDED, type HostedSocket } from './hosted-socket.js';
import { Heartbeat } from './heartbeat.js';
import { watchMessageTime } from './message-deadline.js';

/**
 * ws is CommonJS. Imported through its ES module wrapper, Node first scans the source of each of its files for their
 * export names (cjs-module-lexer): ~80 ms of CPU, a fifth of `import '@promethea/cpp-server'` on a two-core machine
 * (npm run bench:import). Required, the same modules load without the scan, and an application's own
 * `import 'ws'` gets these very instances (both ways share Node's require cache).
 */
const { WebSocketServer } = createRequire(import.meta.url)('ws') as typeof import('ws');

export interface WsTransportOptions<Identity> {
  /** The transport's hard limit: a larger frame closes the connection with 1009 before it is read. */
  maxPayload: number;
  /**
   * Whether to answer upgrades on other paths with 404. Off when attached to someone else's HTTP server, whose
   * other WebSocket endpoints must keep working.
   */
  refuseOtherPaths: boolean;
  /** How often each connection is pinged; one that has not answered the previous ping is dropped. 0: never. */
  heartbeatIntervalMs: number;
  /**
   * How long a peer has to answer a close frame before it is dropped. `ws` alone waits 30 s, during which a peer closed
   * for not reading (4429) or not authenticating (4408) would still hold everything buffered for it.
   */
  closeHandshakeMs: number;
  /** How long one message may take to arrive whole, from its first byte: close 4408 beyond it. 0: no limit. */
  messageTimeoutMs: number;
  /**
   * Frames of at least this many bytes go compressed (permessage-deflate, RFC 7692) to a client that offered it;
   * smaller ones as they are. 0: the extension is not negotiated at all.
   */
  compressionThresholdBytes: number;
  /** Decides, before the upgrade completes, who connects, or refuses; it may take its time (a custom verifier). */
  identify(request: IncomingMessage): Identity | UpgradeRefusal | Promise<Identity | UpgradeRefusal>;
  /** A connection is open. */
  connect(socket: CPPSocket, identity: Identity, request: IncomingMessage): SocketHandlers;
}

/** CPP over `ws`: the upgrades of an HTTP server, and WebSockets an application upgraded itself. */
export interface WsTransport {
  /**
   * Serves a WebSocket another server upgraded, with the request of its upgrade, after the checks an upgrade gets;
   * a refusal closes it with 4000 + the refusal's status.
   */
  accept(webSocket: WebSocket, request: IncomingMessage): void;
  /** Takes no more connections; the open ones are the server's to close. */
  close(): void;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

type UpgradeListener = (request: IncomingMessage, stream: Duplex, head: Buffer) => void;

/** Per HTTP server, the listener a transport closed on it left behind; the next transport attached removes it. */
const closedTransports = new WeakMap<HttpServer, UpgradeListener>();

/**
 * Turns upgrades on the CPP path of `httpServer` (none without one) and WebSockets an application accepted into
 * sessions over `CPPSocket`. `ws` is known here and in the two watchers beside it (heartbeat.ts, message-deadline.ts);
 * the sessions and everything under them know only `CPPSocket`.
 */
export function createWsTransport<Identity>(
  httpServer: HttpServer | undefined,
  options: WsTransportOptions<Identity>,
): WsTransport {
  // `closeTimeout` is an option of ws, not yet of @types/ws.
  const serverOptions: ServerOptions & { closeTimeout: number } = {
    noServer: true,
    maxPayload: options.maxPayload,
    handleProtocols: () => CPP_SUBPROTOCOL,
    closeTimeout: options.closeHandshakeMs,
    perMessageDeflate: perMessageDeflate(options.compressionThresholdBytes),
  };
  const sockets = new WebSocketServer(serverOptions);
  const socketSettings: WsSocketSettings = {
    maxPayload: options.maxPayload,
    compressionThresholdBytes: options.compressionThresholdBytes,
  };
  const heartbeat = options.heartbeatIntervalMs > 0 ? new Heartbeat(options.heartbeatIntervalMs) : undefined;
  let closed = false;

  /** The connection is watched (pongs, slow messages), and what arrives goes to its session. */
  const serve = (webSocket: WebSocket, stream: Duplex, handlers: SocketHandlers) => {
    heartbeat?.watch(webSocket);
    watchMessageTime(webSocket, stream, options.messageTimeoutMs);
    listen(webSocket, handlers);
  };

  const onUpgrade: UpgradeListener = (request, stream, head) => {
    if (!isSessionUpgrade(request, stream, options.refuseOtherPaths)) return;
    if (!offersSubprotocol(request)) return refuse(stream, new UpgradeRefusal(400, SUBPROTOCOL_REQUIRED));
    decide(options.identify(request), (identity) => {
      if (identity instanceof UpgradeRefusal) return refuse(stream, identity);
      sockets.handleUpgrade(request, stream, head, (webSocket) =>
        serve(webSocket, stream, options.connect(new WsCppSocket(webSocket, socketSettings), identity, request)),
      );
    });
  };
  if (httpServer) {
    const closedOne = closedTransports.get(httpServer);
    if (closedOne) httpServer.off('upgrade', closedOne);
    httpServer.on('upgrade', onUpgrade);
  }

  return {
    accept(webSocket, request) {
      // Nothing is read until the connection's session listens: a frame sent meanwhile waits in the socket.
      webSocket.pause();
      const internals = webSocket as unknown as WsInternals;
      // This transport's limits, not those of the application's ws server.
      limitMessages(internals, options.maxPayload);
      internals._closeTimeout = options.closeHandshakeMs;
      const hosting = { identify: options.identify, connect: options.connect, shutDown: () => closed };
      openHosted(new WsCppSocket(webSocket, socketSettings), request, hosting).then(
        (handlers) => {
          webSocket.resume();
          if (!handlers) return;
          // The peer left while it was being admitted.
          if (webSocket.readyState !== webSocket.OPEN || !internals._socket) return handlers.onClose();
          serve(webSocket, internals._socket, handlers);
        },
        () => webSocket.terminate(),
      );
    },
    close() {
      closed = true;
      if (httpServer) {
        httpServer.off('upgrade', onUpgrade);
        const refusing = refuseAfterClose(options.refuseOtherPaths);
        httpServer.on('upgrade', refusing);
        closedTransports.set(httpServer, refusing);
      }
      heartbeat?.stop();
      sockets.close();
    },
  };
}

/** Calls `then` with the identity or refusal `identify` decided, at once when it decided at once. */
function decide<Identity>(
  decided: Identity | UpgradeRefusal | Promise<Identity | UpgradeRefusal>,
  then: (identity: Identity | UpgradeRefusal) => void,
): void {
  if (!(decided instanceof Promise)) return then(decided);
  decided.then(then, () => then(new UpgradeRefusal(500, UNDECIDED)));
}

function offersSubprotocol(request: IncomingMessage): boolean {
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
  return offered.includes(CPP_SUBPROTOCOL);
}

/**
 * Each message is compressed on its own (`serverNoContextTakeover`, without which ws compresses every message
 * whatever the threshold), at zlib's fastest level: a sync of a 10,000-node thread, 5.8 MB, deflates to ~0.3 MB (the
 * bench's text) to ~1.6 MB (text of varied words) in 8–45 ms, on libuv's thread pool. The window and memory level
 * stay zlib's defaults (a lower memory level saved neither memory nor time); a connection's compressor, ~250 KB, is
 * made for a large frame and let go of once it is sent (`WsCppSocket.send`). Neither side's window is narrowed in the
 * negotiation: ws refuses the upgrade of a client whose offer does not allow the number set here.
 */
function perMessageDeflate(thresholdBytes: number): ServerOptions['perMessageDeflate'] {
  if (thresholdBytes <= 0) return false;
  return { threshold: thresholdBytes, serverNoContextTakeover: true, zlibDeflateOptions: { level: 1 } };
}

/** Whether the upgrade is for the CPP path; one for another path is refused with 404 if `refuseOtherPaths`. */
function isSessionUpgrade(request: IncomingMessage, stream: Duplex, refuseOtherPaths: boolean): boolean {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (path === CPP_SESSION_PATH) return true;
  if (refuseOtherPaths) refuse(stream, new UpgradeRefusal(404, `no CPP endpoint here; connect to ${CPP_SESSION_PATH}`));
  return false;
}

/**
 * Answers CPP upgrades once the transport is closed. Without it they would get no answer at all on an application's
 * HTTP server, whose own upgrade listeners leave the CPP path alone. It holds nothing of the closed server.
 */
function refuseAfterClose(refuseOtherPaths: boolean): UpgradeListener {
  return (request, stream) => {
    if (isSessionUpgrade(request, stream, refuseOtherPaths)) refuse(stream, new UpgradeRefusal(503, SHUT_DOWN));
  };
}

/**
 * Outside the upgrade handler on purpose: listeners created in there would share its closure context and keep the
 * upgrade request, headers and all, alive as long as the connection (1.2 KB of heap per idle connection).
 */
function listen(webSocket: WebSocket, handlers: SocketHandlers): void {
  webSocket.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = toBuffer(data);
    handlers.onMessage(isBinary ? bytes : bytes.toString('utf8'), bytes.byteLength);
  });
  webSocket.on('close', () => handlers.onClose());
  // ws closes the connection itself after an error (1009 for an oversized frame, 1002 for a protocol error) and
  // keeps reading meanwhile; terminating here would reset the socket before that close frame reached the peer.
  webSocket.on('error', () => undefined);
}

/** What every connection's socket of a transport shares: made once, not per connection. */
interface WsSocketSettings {
  maxPayload: number;
  compressionThresholdBytes: number;
}

/**
 * What CPP adjusts of ws's internals: fields of ws 8.19 to 8.23 alike (read in their sources); packages/server pins
 * ws to the minor its tests ran on, so that an upgrade of ws is one the tests have seen. ws has one `maxPayload` per server. Its receiver checks each frame
 * header against its own copy, so changing that copy limits this connection alone, before the frame's payload is
 * buffered; a compressed frame is inflated only as far as the connection's permessage-deflate copy allows (the
 * proof-of-possession tests check both). The compressor (`_deflate`) is the extension's, made again when needed;
 * the sender's `_state` is `SENDER_IDLE` while no message is being compressed or waits for it (the compression tests
 * check it is let go of, and that the next large frame is still compressed).
 */
interface WsInternals {
  _receiver?: { _maxPayload: number };
  _sender?: { _state: number };
  _extensions?: Record<string, { _maxPayload: number; _deflate: { close(): void } | null } | undefined>;
  /** The connection's close handshake time, set from its server's `closeTimeout` (ws 8.19 on). */
  _closeTimeout: number;
  /** The network stream under the WebSocket. */
  _socket: Duplex | null;
}

function limitMessages(internals: WsInternals, bytes: number): void {
  const { _receiver: receiver, _extensions: extensions } = internals;
  if (receiver) receiver._maxPayload = bytes;
  const inflater = extensions?.['permessage-deflate'];
  if (inflater) inflater._maxPayload = bytes;
}

const SENDER_IDLE = 0;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit: a shorter text is never past the compression threshold. */
const MAX_UTF8_BYTES_PER_UNIT = 3;

/** Sent as text frames, whose payload the bytes are. */
const TEXT_FRAME = { binary: false } as const;

/**
 * The last text sent and its UTF-8 bytes. A thread's frame goes to each subscriber's socket in turn, in one go: its
 * bytes are made once for all of them (ws would encode a string again for each socket; a server frame is not masked,
 * so every socket can write the same bytes). Both are let go of once that turn of the event loop is over, so that a
 * large sync is not held after it was sent.
 */
let lastText: string | undefined;
let lastBytes: Buffer | undefined;

function utf8Once(text: string): Buffer {
  if (text === lastText && lastBytes) return lastBytes;
  if (lastText === undefined) process.nextTick(forgetLastText);
  lastText = text;
  lastBytes = Buffer.from(text, 'utf8');
  return lastBytes;
}

function forgetLastText(): void {
  lastText = undefined;
  lastBytes = undefined;
}

/** A class, not an object of closures: its methods are shared by every connection instead of made for each one. */
class WsCppSocket implements HostedSocket {
  constructor(
    private readonly webSocket: WebSocket,
    private readonly settings: WsSocketSettings,
  ) {}

  get protocol(): string {
    return this.webSocket.protocol;
  }

  limitMessageBytes(bytes = this.settings.maxPayload): void {
    limitMessages(this.webSocket as unknown as WsInternals, bytes);
  }

  send(text: string, written?: () => void): void {
    if (this.webSocket.readyState !== this.webSocket.OPEN) return;
    const { compressionThresholdBytes } = this.settings;
    const bytes = utf8Once(text);
    if (compressionThresholdBytes <= 0 || text.length * MAX_UTF8_BYTES_PER_UNIT < compressionThresholdBytes)
      return this.webSocket.send(bytes, TEXT_FRAME, written);
    this.webSocket.send(bytes, TEXT_FRAME, () => {
      this.releaseCompressor();
      written?.();
    });
  }

  /**
   * ws keeps a connection's compressor, ~250 KB, from its first compressed message until the connection closes
   * (resetting it between messages, which share no context here): a thousand connections that once synced a large
   * thread held a quarter of a gigabyte. Closed once nothing is being compressed, it is made again for the next
   * large frame, and at most as many exist as ws compresses at once.
   */
  private releaseCompressor(): void {
    const { _sender: sender, _extensions: extensions } = this.webSocket as unknown as WsInternals;
    const deflate = extensions?.['permessage-deflate'];
    if (!deflate?._deflate || sender?._state !== SENDER_IDLE) return;
    deflate._deflate.close();
    deflate._deflate = null;
  }

  close(code: number, reason: string): void {
    this.webSocket.close(code, reason);
  }

  terminate(): void {
    this.webSocket.terminate();
  }

  get bufferedAmount(): number {
    return this.webSocket.bufferedAmount;
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function refuse(stream: Duplex, refusal: UpgradeRefusal): void {
  const body = `${refusal.body}\n`;
  stream.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_TEXT[refusal.status] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
