/** Who is on the other end of a connection: `verified` once the DID is proven (docs/PROTOCOL.md §23). */
export interface Identity {
  did: string;
  verified: boolean;
}

export const ANONYMOUS_DID = 'anonymous';

export { isDid } from '@promethea/cpp-protocol';
