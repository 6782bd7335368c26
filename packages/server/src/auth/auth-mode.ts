import type { IncomingMessage } from 'node:http';
import type { Identity } from '../engine/identity.js';
import type { UpgradeRefusal } from './upgrade-refusal.js';

/**
 * Decides who connects from the upgrade request alone (a session cookie, a bearer token, a client certificate),
 * or refuses it. The identities it returns own threads as proven ones do.
 */
export type IdentityVerifier = (
  request: IncomingMessage,
) => Identity | UpgradeRefusal | Promise<Identity | UpgradeRefusal>;

/**
 * How a server knows who is connecting (docs/PROTOCOL.md §2.5): `did-key` asks every connection to prove its
 * did:key; `claimed` trusts the X-Client-Sovereign-DID header, for local development; or your own verifier.
 */
export type AuthOption = 'did-key' | 'claimed' | IdentityVerifier;
