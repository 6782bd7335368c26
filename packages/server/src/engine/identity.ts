/** Who is on the other end of a connection. `verified` stays false until proof of possession exists. */
export interface Identity {
  did: string;
  verified: boolean;
}

export const ANONYMOUS_DID = 'anonymous';

/** DID syntax (W3C DID Core): `did:<method>:<method-specific id>`; bounded so that it can be stored and logged. */
const DID_PATTERN = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

export function isDid(value: string): boolean {
  return value.length <= 256 && DID_PATTERN.test(value);
}
