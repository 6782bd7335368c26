import type { IncomingMessage } from 'node:http';
import { CPP_SUBPROTOCOL, CloseCode } from '@promethea/cpp-protocol';
import { UpgradeRefusal } from '../auth/upgrade-refusal.js';
import type { CPPSocket, SocketHandlers } from './cpp-socket.js';

/**
 * A WebSocket another server upgraded, of any library (uWebSockets.js, …; `ws` has `CPPServer.accept`): what CPP
 * needs of it. The application feeds the returned `SocketHandlers` with what arrives, and reads messages of at most
 * the bytes `limitMessageBytes` last set when its library allows (else the session refuses larger ones once read).
 */
export interface HostedSocket extends CPPSocket {
  /** The subprotocol its upgrade selected: CPP serves `cpp-v1.0.0` only. */
  readonly protocol: string;
}

/** How a server admits and serves the sockets it is handed. */
export interface Hosting<Identity> {
  /** Who connects, decided from the upgrade's request as for the server's own upgrades, or a refusal. */
  identify(request: IncomingMessage): Identity | UpgradeRefusal | Promise<Identity | UpgradeRefusal>;
  connect(socket: CPPSocket, identity: Identity, request: IncomingMessage): SocketHandlers;
  /** The server has shut down: it takes no more connections. */
  shutDown(): boolean;
}

const MAX_CLOSE_REASON_BYTES = 123;
/** The refusals' texts, over HTTP and in close frames alike (docs/PROTOCOL.md §18.1). */
export const SUBPROTOCOL_REQUIRED = `CPP requires the WebSocket subprotocol ${CPP_SUBPROTOCOL}`;
export const SHUT_DOWN = 'this CPP server has shut down';
export const UNDECIDED = 'the server could not decide who is connecting';

/**
 * Admits a socket already upgraded, with its upgrade's request: the checks of an upgrade (docs/PROTOCOL.md §18.1,
 * from the subprotocol on), then its session's handlers; `undefined` once a refused socket is closed, with 4000 + the
 * status the refusal would have had over HTTP (4500 for a 5xx), or 1001 after shutdown.
 */
export async function openHosted<Identity>(
  socket: HostedSocket,
  request: IncomingMessage,
  hosting: Hosting<Identity>,
): Promise<SocketHandlers | undefined> {
  if (hosting.shutDown()) return closeRefused(socket, new UpgradeRefusal(503, SHUT_DOWN));
  if (socket.protocol !== CPP_SUBPROTOCOL) return closeRefused(socket, new UpgradeRefusal(400, SUBPROTOCOL_REQUIRED));
  let identity: Identity | UpgradeRefusal;
  try {
    identity = await hosting.identify(request);
  } catch {
    identity = new UpgradeRefusal(500, UNDECIDED);
  }
  if (identity instanceof UpgradeRefusal) return closeRefused(socket, identity);
  return hosting.connect(socket, identity, request);
}

function closeRefused(socket: CPPSocket, refusal: UpgradeRefusal): undefined {
  const code =
    refusal.status === 503
      ? CloseCode.GOING_AWAY
      : refusal.status >= 400 && refusal.status < 500
        ? 4000 + refusal.status
        : CloseCode.INTERNAL_ERROR;
  socket.close(code, truncateUtf8(refusal.body, MAX_CLOSE_REASON_BYTES));
  return undefined;
}

/** The longest start of `text` that is at most `maxBytes` in UTF-8, no code point cut in two. */
function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= maxBytes) return text;
  // A code point cut in two decodes to U+FFFD: dropped, so the reason stays within the limit.
  return bytes
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
