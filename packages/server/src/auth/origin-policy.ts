import type { IncomingMessage } from 'node:http';

/** Every origin may connect. */
export const ANY_ORIGIN = '*';
/** Pages of the server's own origin (the `Origin` host equals the request's `Host`) may connect. */
export const SAME_ORIGIN = 'self';

/**
 * Whether a browser page may open a session: against cross-site WebSocket hijacking, where a page of another
 * site makes the visitor's browser connect. Browsers always send `Origin` on a WebSocket upgrade; other clients
 * need not, and a request without it passes. `allowed` holds origins (`https://chat.example`), `self` or `*`.
 */
export function originAllowed(request: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = request.headers.origin;
  if (origin === undefined || allowed.includes(ANY_ORIGIN)) return true;
  if (allowed.includes(origin)) return true;
  return allowed.includes(SAME_ORIGIN) && hostOf(origin) === request.headers.host?.toLowerCase();
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
