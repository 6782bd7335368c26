import type { ClientPlatform } from './client-platform.js';
import type { CPPClientOptions } from './client-options.js';
import { ConnectDeadlineSocket, DEFAULT_CONNECT_TIMEOUT_MS } from './connect-deadline-socket.js';
import { AuthenticatingSocket, DEFAULT_AUTH_TIMEOUT_MS } from './identity/authenticating-socket.js';
import { DidKeyIdentity } from './identity/did-key-identity.js';
import type { DidSigner } from './identity/did-signer.js';
import { PendingIdentitySocket } from './identity/pending-identity-socket.js';
import { sessionUrl } from './session-url.js';
import type { WebSocketLike } from './web-socket-like.js';

/**
 * How the client opens each session socket: one whose upgrade is not answered in time is given up on. With an
 * identity, the DID is claimed at the upgrade (so that any server challenges it) and proven on every socket before
 * the client uses it. An identity still loading delays the first socket until it is there.
 */
export function sessionOpener(
  options: CPPClientOptions,
  { openSocket, decodeServerFrame }: ClientPlatform,
): () => WebSocketLike {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const open = (did: string | undefined) =>
    new ConnectDeadlineSocket(openSocket(options.endpoint, did), connectTimeoutMs);
  const signer = signerOf(options.identity);
  if (!signer) return () => open(options.did);
  const endpoint = sessionUrl(options.endpoint);
  const authTimeoutMs = options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS;
  const authenticating = (ready: DidSigner) =>
    new AuthenticatingSocket(open(ready.did), ready, endpoint, authTimeoutMs, decodeServerFrame);
  if (!isPromise(signer)) {
    checkClaim(options.did, signer);
    return () => authenticating(signer);
  }
  let loaded: DidSigner | undefined;
  const checked = signer.then((ready) => {
    checkClaim(options.did, ready);
    return (loaded = ready);
  });
  return () => (loaded ? authenticating(loaded) : new PendingIdentitySocket(checked.then(authenticating)));
}

function signerOf(identity: CPPClientOptions['identity']): DidSigner | Promise<DidSigner> | undefined {
  if (identity === undefined) return undefined;
  return identity instanceof Uint8Array || typeof identity === 'string'
    ? DidKeyIdentity.fromPrivateKey(identity)
    : identity;
}

function checkClaim(did: string | undefined, signer: DidSigner): void {
  if (did !== undefined && did !== signer.did)
    throw new TypeError(`options.did (${did}) is not the identity's DID (${signer.did})`);
}

function isPromise(signer: DidSigner | Promise<DidSigner>): signer is Promise<DidSigner> {
  return typeof (signer as { then?: unknown }).then === 'function';
}
