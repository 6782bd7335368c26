import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import sirv from 'sirv';

/**
 * Plain HTTP beside the WebSocket endpoint on the same port: a liveness probe, the web UI's static files when a
 * directory is given (any unknown path falls back to its index.html), and clear answers everywhere else.
 */
export function createHttpHandler(staticDir: string | undefined): RequestListener {
  const serveStatic = staticDir ? sirv(staticDir, { single: true, etag: true, gzip: false }) : undefined;
  return (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz') return respond(response, 200, 'application/json', '{"status":"ok"}');
    if (path === CPP_SESSION_PATH) {
      return respond(response, 426, 'text/plain; charset=utf-8', `CPP is a WebSocket protocol: upgrade with the subprotocol ${CPP_SUBPROTOCOL}\n`);
    }
    if (serveStatic) return serveStatic(request, response, () => respond(response, 404, 'text/plain; charset=utf-8', 'not found\n'));
    respond(response, 404, 'text/plain; charset=utf-8', `not found; the CPP endpoint is ${CPP_SESSION_PATH}\n`);
  };
}

function respond(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}
