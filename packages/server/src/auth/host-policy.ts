import { isIP } from 'node:net';
import { HOST_PATTERN } from './audience.js';

/** Every Host may be used. */
export const ANY_HOST = '*';

/**
 * Whether an upgrade's `Host` names this server, against DNS rebinding: a page of `evil.example`, whose name has
 * been made to resolve to this server's address, passes the `self` origin check (its Origin matches its Host) and,
 * without a public URL, gets challenges made out to an audience of its choosing. Like the dev servers' allowed-hosts
 * lists: IP addresses (which no page can rebind), `localhost` and its subdomains, and the names in `allowed` (any
 * port; `*` allows every Host).
 */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (allowed.includes(ANY_HOST)) return true;
  const name = host === undefined ? undefined : hostName(host);
  if (name === undefined) return false;
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
  return allowed.some((entry) => entry.toLowerCase() === name);
}

/** The name or address of a Host header, without its port or brackets, lower-cased; undefined if it is none. */
function hostName(host: string): string | undefined {
  if (!HOST_PATTERN.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return undefined;
  }
}
