import type { IncomingMessage } from 'node:http';

/**
 * The address a request comes from, for the per-address connection limit. Behind a reverse proxy every request
 * comes from the proxy: with `trustProxy` the address is the last hop the proxy appended to `X-Forwarded-For`.
 * Only turn it on behind a proxy that sets that header, or clients choose their own address.
 */
export function clientAddress(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? lastForwardedFor(request.headers['x-forwarded-for']) : undefined;
  return forwarded ?? request.socket.remoteAddress ?? 'unknown';
}

function lastForwardedFor(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.at(-1) : header;
  const last = value?.split(',').at(-1)?.trim();
  return last === '' ? undefined : last;
}
