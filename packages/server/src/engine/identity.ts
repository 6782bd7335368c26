/** Who is on the other end of a connection: `verified` once the DID is proven (docs/PROTOCOL.md §23). */
export interface Identity {
  did: string;
  verified: boolean;
}

export const ANONYMOUS_DID = 'anonymous';

/** What a user node records of who sent it: a proven DID only, since a claimed one is no evidence (§29.5). */
export function authorOf(identity: Identity): { authorDid?: string } {
  return identity.verified ? { authorDid: identity.did } : {};
}

export { isDid } from '@promethea/cpp-protocol';
