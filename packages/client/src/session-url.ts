import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';

/**
 * The session URL for an endpoint: `http(s)` becomes `ws(s)`, and a URL without a path gets the session path, so
 * that `ws://localhost:8080` works as well as the full `ws://localhost:8080/v1/cpp/session`.
 */
export function sessionUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.pathname === '' || url.pathname === '/') url.pathname = CPP_SESSION_PATH;
  return url;
}

/** `path` on the HTTP origin of the session's endpoint (ws → http, wss → https). */
export function httpUrl(sessionUrl: URL, path: string): URL {
  const url = new URL(path, sessionUrl);
  url.protocol = sessionUrl.protocol === 'wss:' ? 'https:' : 'http:';
  return url;
}
