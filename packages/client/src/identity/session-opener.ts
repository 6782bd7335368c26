import type { CPPClientOptions } from '../client-options.js';
import { sessionUrl } from '../session-url.js';
import type { SocketOpener, WebSocketLike } from '../web-socket-like.js';
import { AuthenticatingSocket, DEFAULT_AUTH_TIMEOUT_MS } from './authenticating-socket.js';
import { DidKeyIdentity } from './did-key-identity.js';
import type { DidSigner } from './did-signer.js';

/**
 * How the client opens each session socket. With an identity, the DID is claimed at the upgrade (so that any
 * server challenges it) and proven on every socket before the client uses it.
 */
export function sessionOpener(options: CPPClientOptions, openSocket: SocketOpener): () => WebSocketLike {
  const signer = signerOf(options.identity);
  if (!signer) return () => openSocket(options.endpoint, options.did);
  if (options.did !== undefined && options.did !== signer.did) throw new TypeError(`options.did (${options.did}) is not the identity's DID (${signer.did})`);
  const endpoint = sessionUrl(options.endpoint);
  const timeoutMs = options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;
  return () => new AuthenticatingSocket(openSocket(options.endpoint, signer.did), signer, endpoint, timeoutMs);
}

function signerOf(identity: CPPClientOptions['identity']): DidSigner | undefined {
  if (identity === undefined) return undefined;
  return identity instanceof Uint8Array || typeof identity === 'string' ? DidKeyIdentity.fromPrivateKey(identity) : identity;
}
