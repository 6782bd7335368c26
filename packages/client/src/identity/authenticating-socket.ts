import {
  authStatementBytes,
  encodeBase64Url,
  encodeClientFrame,
  type AuthChallengeFrame,
} from '@promethea/cpp-protocol';
import type { ClientPlatform } from '../client-platform.js';
import type { WebSocketLike } from '../web-socket-like.js';
import { WrappingSocket } from '../wrapping-socket.js';
import type { DidSigner } from './did-signer.js';

/** Policy violation: what the client closes with when the server's challenge is not one it may sign. */
const POLICY_VIOLATION = 1008;
/** The server's own close for an authentication that takes too long (PROTOCOL.md §23.2); a reconnect retries it. */
const AUTHENTICATION_TIMEOUT = 4408;
/** How long, from the upgrade, the client waits for the challenge and the acceptance of its proof. */
export const DEFAULT_AUTH_TIMEOUT_MS = 10_000;

/**
 * A session socket that proves the client's DID (docs/PROTOCOL.md §23.2) before it reports itself open: it answers
 * the server's CPP_AUTH_CHALLENGE with a CPP_AUTH_PROOF, and `open` fires once CPP_AUTH_ACCEPTED has arrived. The
 * client above it therefore sends nothing before the proof is accepted, on every connection, reconnects included.
 * A challenge for another endpoint is not signed: the socket is closed with 1008. Any other frame goes up as it
 * came (a refused proof's UNAUTHORIZED, before the server closes with 4401). A server that has not accepted a
 * proof `timeoutMs` after the upgrade (one that never challenges, or never answers the proof) is given up on with
 * 4408, rather than waited for without end.
 */
export class AuthenticatingSocket extends WrappingSocket {
  private authenticated = false;
  private challenged = false;
  private gaveUp = false;
  private deadline: ReturnType<typeof setTimeout> | undefined;

  constructor(
    socket: WebSocketLike,
    private readonly signer: DidSigner,
    private readonly endpoint: URL,
    timeoutMs: number,
    private readonly decode: ClientPlatform['decodeServerFrame'],
  ) {
    super(socket);
    socket.addEventListener('open', () => (this.deadline = setTimeout(() => this.giveUp(), timeoutMs)));
    socket.addEventListener('message', (event) => {
      if (this.gaveUp) return;
      if (this.authenticated) this.emit('message', event);
      else this.beforeAuthenticated(event);
    });
    socket.addEventListener('close', (event) => {
      clearTimeout(this.deadline);
      if (!this.gaveUp) this.emit('close', event);
    });
    socket.addEventListener('error', () => {
      if (!this.gaveUp) this.emit('error', undefined);
    });
  }

  private beforeAuthenticated(event: { data: unknown }): void {
    const decoded = typeof event.data === 'string' ? this.decode(event.data) : undefined;
    if (decoded?.ok && decoded.frame.type === 'CPP_AUTH_CHALLENGE') return void this.answer(decoded.frame.payload);
    if (decoded?.ok && decoded.frame.type === 'CPP_AUTH_ACCEPTED') {
      clearTimeout(this.deadline);
      this.authenticated = true;
      return this.emit('open', undefined);
    }
    this.emit('message', event);
  }

  /**
   * Reported closed at once rather than after the closing handshake, which a server that does not speak the
   * handshake may never finish; whatever the socket does afterwards is not passed on.
   */
  private giveUp(): void {
    const reason = this.challenged
      ? 'the server did not accept the proof in time'
      : 'the server sent no identity challenge in time';
    this.gaveUp = true;
    this.socket.close(AUTHENTICATION_TIMEOUT, reason);
    this.emit('close', { code: AUTHENTICATION_TIMEOUT, reason });
  }

  private async answer(challenge: AuthChallengeFrame['payload']): Promise<void> {
    this.challenged = true;
    if (!namesEndpoint(challenge.audience, this.endpoint)) {
      return this.socket.close(POLICY_VIOLATION, 'the challenge is for another endpoint');
    }
    let signature: Uint8Array;
    try {
      const { did } = this.signer;
      signature = await this.signer.sign(
        authStatementBytes({
          did,
          audience: challenge.audience,
          nonce: challenge.nonce,
          expiresAt: challenge.expiresAt,
        }),
      );
    } catch {
      return this.socket.close(POLICY_VIOLATION, 'the challenge could not be signed');
    }
    const payload = { did: this.signer.did, nonce: challenge.nonce, signature: encodeBase64Url(signature) };
    this.socket.send(encodeClientFrame({ type: 'CPP_AUTH_PROOF', timestamp: Date.now(), payload }));
  }
}

/**
 * Whether a challenge's audience is the endpoint the client connected to: the same host, port and path. The scheme
 * may differ (ws for wss) behind a proxy that terminates TLS.
 */
function namesEndpoint(audience: string, endpoint: URL): boolean {
  try {
    const named = new URL(audience);
    return (
      ['ws:', 'wss:'].includes(named.protocol) && named.host === endpoint.host && named.pathname === endpoint.pathname
    );
  } catch {
    return false;
  }
}
