import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import type { Registry } from 'prom-client';
import sirv from 'sirv';
import { securityHeaders } from './http-headers.js';
import type { ReadinessReport } from './observability/readiness.js';

export { securityHeaders } from './http-headers.js';

export interface HttpRoutes {
  /** Static files (the web UI) served at `/`. */
  staticDir?: string;
  /** Served at /metrics in Prometheus' text format. */
  metrics?: Pick<Registry, 'metrics' | 'contentType'>;
  /** Answers /readyz. */
  readiness(): Promise<ReadinessReport>;
  /** The attachment endpoints (docs/PROTOCOL.md §27): true when the path was theirs and the request is answered. */
  attachments?: (request: IncomingMessage, response: ServerResponse, path: string) => boolean;
  /** The pages of read-only share links (docs/PROTOCOL.md §29.10): true when the path was theirs. */
  shares?: (request: IncomingMessage, response: ServerResponse, path: string) => boolean;
}

/**
 * Plain HTTP beside the WebSocket endpoint on the same port: liveness (/healthz) and readiness (/readyz) probes,
 * the Prometheus metrics, the web UI's static files when a directory is given (see {@link serveWebUi}), and clear
 * answers everywhere else.
 */
export function createHttpHandler(routes: HttpRoutes): RequestListener {
  const serveStatic = routes.staticDir ? serveWebUi(routes.staticDir) : undefined;
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz') return respond(response, 200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') return void answerReadiness(routes, response);
    if (path === '/metrics' && routes.metrics) return void answerMetrics(routes.metrics, response);
    if (routes.attachments?.(request, response, path)) return;
    if (routes.shares?.(request, response, path)) return;
    if (path === CPP_SESSION_PATH) {
      return respond(
        response,
        426,
        'text/plain; charset=utf-8',
        `CPP is a WebSocket protocol: upgrade with the subprotocol ${CPP_SUBPROTOCOL}\n`,
      );
    }
    if (serveStatic) return serveStatic(request, response, path);
    respond(response, 404, 'text/plain; charset=utf-8', `not found; the CPP endpoint is ${CPP_SESSION_PATH}\n`);
  };
}

/** Built files are named by their content hash: a name is never reused for other bytes, so browsers keep them. */
const HASHED_ASSETS = '/assets/';

/**
 * The web UI's files, each answer with the page's security headers. An app route (a path without a file
 * extension) falls back to index.html, as a single-page app needs; a missing file is a 404, never the page in its
 * place (a script tag pointing at a stale asset must fail, not run HTML as script). Source maps are not served: the
 * build keeps them for local debugging only.
 */
function serveWebUi(directory: string): (request: IncomingMessage, response: ServerResponse, path: string) => void {
  const setHeaders = (response: ServerResponse, path: string) => {
    for (const [name, value] of Object.entries(securityHeaders(response.req.headers.host)))
      response.setHeader(name, value);
    response.setHeader(
      'Cache-Control',
      path.startsWith(HASHED_ASSETS) ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
  };
  const files = sirv(directory, { etag: true, gzip: false, dotfiles: false, setHeaders });
  const page = sirv(directory, { single: true, etag: true, gzip: false, dotfiles: false, setHeaders });
  const notFound = (response: ServerResponse) => {
    for (const [name, value] of Object.entries(securityHeaders(undefined))) response.setHeader(name, value);
    respond(response, 404, 'text/plain; charset=utf-8', 'not found\n');
  };
  return (request, response, path) => {
    if (path.endsWith('.map')) return notFound(response);
    const isFile = path.startsWith(HASHED_ASSETS) || /\.[^/]*$/.test(path);
    (isFile ? files : page)(request, response, () => notFound(response));
  };
}

async function answerReadiness(routes: HttpRoutes, response: ServerResponse): Promise<void> {
  const report = await routes.readiness();
  respond(
    response,
    report.ready ? 200 : 503,
    'application/json',
    JSON.stringify({ status: report.ready ? 'ready' : 'unavailable', checks: report.checks }),
  );
}

async function answerMetrics(registry: NonNullable<HttpRoutes['metrics']>, response: ServerResponse): Promise<void> {
  try {
    respond(response, 200, registry.contentType, await registry.metrics());
  } catch (error) {
    respond(
      response,
      500,
      'text/plain; charset=utf-8',
      `metrics could not be collected: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

function respond(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}
