/** The longest DID a server accepts, so that identities can be stored, indexed and logged. */
export const DID_MAX_LENGTH = 256;

/** DID syntax (W3C DID Core): `did:<method>:<method-specific id>`. */
export const DID_PATTERN = /^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/;

export function isDid(value: string): boolean {
  return value.length <= DID_MAX_LENGTH && DID_PATTERN.test(value);
}
