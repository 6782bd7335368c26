import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';
import type { Json } from './json.js';

/** Where the server under test listens: its origin, and the path of its session endpoint. */
export interface Endpoint {
  origin: string;
  sessionPath: string;
}

/** Accepts `ws://host:port` (the session endpoint is then /v1/cpp/session) or the endpoint's full URL. */
export function parseEndpoint(text: string): Endpoint {
  const url = new URL(text);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new Error(`expected a ws:// or wss:// URL, got ${text}`);
  return { origin: url.origin, sessionPath: url.pathname === '/' ? CPP_SESSION_PATH : url.pathname };
}

/** The URL of an upgrade request: a path on the origin (the session endpoint by default) with query parameters. */
export function requestUrl(endpoint: Endpoint, path: string | undefined, query: Record<string, Json> = {}): string {
  const url = new URL(path ?? endpoint.sessionPath, endpoint.origin);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, String(value));
  return url.toString();
}
