import type { IncomingMessage } from 'node:http';
import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';

/** A Host header as browsers and proxies send it: a name or address, and a port. */
export const HOST_PATTERN = /^[A-Za-z0-9.:[\]-]{1,255}$/;

/**
 * The endpoint a challenge names as its audience, which a client checks against the URL it connected to. A
 * configured public URL pins it; without one it is derived from the request's `Host` (and, behind a trusted proxy,
 * `X-Forwarded-Proto`) and its path (the session path, or wherever an application mounted CPP and handed the connection
 * to `CPPServer.accept`), which a relaying server can forge: production servers set their public URL. `undefined`
 * when the Host header cannot be part of a URL.
 */
export function audienceOf(
  request: IncomingMessage,
  options: { publicUrl: string | undefined; secure: boolean; trustProxy: boolean },
): string | undefined {
  if (options.publicUrl !== undefined) return options.publicUrl;
  const host = request.headers.host;
  if (host === undefined || !HOST_PATTERN.test(host)) return undefined;
  const forwardedProto = options.trustProxy ? request.headers['x-forwarded-proto'] : undefined;
  const secure = options.secure || forwardedProto === 'https';
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  return `${secure ? 'wss' : 'ws'}://${host.toLowerCase()}${path}`;
}

/** A configured public URL as an audience: the session URL it names (`https://chat.example` → `wss://chat.example/v1/cpp/session`). */
export function publicSessionUrl(publicUrl: string): string {
  const url = new URL(publicUrl);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new TypeError(`a public URL is ws(s) or http(s), not ${url.protocol}`);
  if (url.pathname === '/' || url.pathname === '') url.pathname = CPP_SESSION_PATH;
  return url.href;
}
