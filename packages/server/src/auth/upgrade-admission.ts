import type { IncomingMessage } from 'node:http';
import { isEd25519DidKey } from '@promethea/cpp-protocol';
import { claimedIdentity } from './claimed-identity.js';
import { ANONYMOUS_DID, type Identity } from '../engine/identity.js';
import { UpgradeRefusal } from './upgrade-refusal.js';
import { audienceOf } from './audience.js';
import type { AuthOption } from './auth-mode.js';
import { issueChallenge, type Challenge } from './challenge.js';
import { hostAllowed } from './host-policy.js';
import { clientAddress } from './client-address.js';
import type { ConnectionCounter } from './limits/connection-counter.js';
import { originAllowed } from './origin-policy.js';

export interface AdmissionSettings {
  auth: AuthOption;
  allowedOrigins: readonly string[];
  /** The names the Host header may carry besides IP addresses and localhost (see `hostAllowed`). */
  allowedHosts: readonly string[];
  trustProxy: boolean;
  /** The session URL challenges name as their audience; derived from each request when undefined. */
  publicUrl: string | undefined;
  /** Whether this server terminates TLS itself. */
  secure: boolean;
  challengeTtlMs: number;
  maxConnectionsPerIp: number;
  /** The open connections per address. */
  addresses: ConnectionCounter;
}

/** Who a new connection is, as far as the upgrade request tells, and what it must still do. */
export interface Admission {
  identity: Identity;
  /** The connection must prove a did:key before any other frame is taken. */
  proofRequired: boolean;
  /** Sent as the connection's first frame: always when a proof is required, else when the claim can be proven. */
  challenge: Challenge | undefined;
  /** The address counted against the per-address limit. */
  address: string;
}

/** Decides at the upgrade, before a WebSocket exists, whether a request may connect, and as whom. */
export async function admit(
  request: IncomingMessage,
  settings: AdmissionSettings,
): Promise<Admission | UpgradeRefusal> {
  if (!hostAllowed(request.headers.host, settings.allowedHosts)) {
    return new UpgradeRefusal(
      403,
      `this server does not answer to the Host ${JSON.stringify(request.headers.host?.slice(0, 255) ?? '')}; allow it with --allowed-hosts`,
    );
  }
  if (!originAllowed(request, settings.allowedOrigins))
    return new UpgradeRefusal(403, `pages of ${request.headers.origin} may not open CPP sessions here`);
  const address = clientAddress(request, settings.trustProxy);
  if (settings.maxConnectionsPerIp > 0 && settings.addresses.count(address) >= settings.maxConnectionsPerIp) {
    return new UpgradeRefusal(
      429,
      `too many connections from ${address}; the limit is ${settings.maxConnectionsPerIp}`,
    );
  }
  if (typeof settings.auth === 'function') {
    const verified = await settings.auth(request);
    return verified instanceof UpgradeRefusal
      ? verified
      : { identity: verified, proofRequired: false, challenge: undefined, address };
  }
  const claim = claimedIdentity(request);
  if (claim instanceof UpgradeRefusal) return claim;
  const provable = isEd25519DidKey(claim.did);
  const proofRequired = settings.auth === 'did-key';
  if (proofRequired && claim.did !== ANONYMOUS_DID && !provable) {
    return new UpgradeRefusal(401, `this server proves identities, and ${claim.did} is not an Ed25519 did:key`);
  }
  if (!proofRequired && !provable) return { identity: claim, proofRequired, challenge: undefined, address };
  const audience = audienceOf(request, settings);
  if (audience === undefined) return new UpgradeRefusal(400, 'the Host header is missing or malformed');
  return {
    identity: claim,
    proofRequired,
    challenge: issueChallenge(audience, settings.challengeTtlMs, Date.now()),
    address,
  };
}
