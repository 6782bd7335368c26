import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import type { Registry } from 'prom-client';
import sirv from 'sirv';
import type { ReadinessReport } from './observability/readiness.js';

export interface HttpRoutes {
  /** Static files (the web UI) served at `/`. */
  staticDir?: string;
  /** Served at /metrics in Prometheus' text format. */
  metrics?: Pick<Registry, 'metrics' | 'contentType'>;
  /** Answers /readyz. */
  readiness(): Promise<ReadinessReport>;
}

/**
 * Plain HTTP beside the WebSocket endpoint on the same port: liveness (/healthz) and readiness (/readyz) probes,
 * the Prometheus metrics, the web UI's static files when a directory is given (any unknown path falls back to its
 * index.html), and clear answers everywhere else.
 */
export function createHttpHandler(routes: HttpRoutes): RequestListener {
  const serveStatic = routes.staticDir ? sirv(routes.staticDir, { single: true, etag: true, gzip: false }) : undefined;
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz') return respond(response, 200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') return void answerReadiness(routes, response);
    if (path === '/metrics' && routes.metrics) return void answerMetrics(routes.metrics, response);
    if (path === CPP_SESSION_PATH) {
      return respond(response, 426, 'text/plain; charset=utf-8', `CPP is a WebSocket protocol: upgrade with the subprotocol ${CPP_SUBPROTOCOL}\n`);
    }
    if (serveStatic) return serveStatic(request, response, () => respond(response, 404, 'text/plain; charset=utf-8', 'not found\n'));
    respond(response, 404, 'text/plain; charset=utf-8', `not found; the CPP endpoint is ${CPP_SESSION_PATH}\n`);
  };
}

async function answerReadiness(routes: HttpRoutes, response: ServerResponse): Promise<void> {
  const report = await routes.readiness();
  respond(response, report.ready ? 200 : 503, 'application/json', JSON.stringify({ status: report.ready ? 'ready' : 'unavailable', checks: report.checks }));
}

async function answerMetrics(registry: NonNullable<HttpRoutes['metrics']>, response: ServerResponse): Promise<void> {
  try {
    respond(response, 200, registry.contentType, await registry.metrics());
  } catch (error) {
    respond(response, 500, 'text/plain; charset=utf-8', `metrics could not be collected: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

function respond(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}
