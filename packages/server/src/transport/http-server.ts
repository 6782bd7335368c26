import { createServer, type RequestListener, type Server as HttpServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

export interface HttpServerOptions {
  /** Serve HTTPS (and so `wss://`) with this certificate and key. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** Time for a request's headers, the WebSocket upgrade's included, to arrive: HTTP 408 beyond it. 0: Node's default. */
  handshakeTimeoutMs: number;
}

/**
 * The server's own HTTP server. Node checks its timeouts only every `connectionsCheckingInterval` (30 s by
 * default), so the interval follows the handshake timeout: a slow upgrade is cut close to when it is due.
 */
export function createHttpServer(options: HttpServerOptions, handler: RequestListener): HttpServer {
  const timeouts =
    options.handshakeTimeoutMs > 0
      ? {
          headersTimeout: options.handshakeTimeoutMs,
          // Node refuses a request timeout shorter than the headers timeout.
          requestTimeout: Math.max(300_000, options.handshakeTimeoutMs),
          connectionsCheckingInterval: Math.max(50, Math.min(30_000, options.handshakeTimeoutMs / 4)),
        }
      : {};
  // An https.Server is an http.Server over TLS: the same requests, upgrades and close methods.
  return options.tls
    ? (createTlsServer({ ...options.tls, ...timeouts }, handler) as unknown as HttpServer)
    : createServer(timeouts, handler);
}
