import type { IncomingMessage } from 'node:http';
import type WebSocket from 'ws';

/** How much of a refusal's body is read and reported: enough for a reason, not for a hostile server's flood. */
const MAX_REFUSAL_BYTES = 1024;

/**
 * Watches a `ws` socket's upgrade and says, once it failed, why: the HTTP status and body of a refused upgrade
 * (the reference server answers e.g. `401 Unauthorized` with "… is not an Ed25519 did:key"), or the network error
 * (`connect ECONNREFUSED …`). Only Node can see either; a browser cannot (see BROWSER_OPEN_FAILURE).
 */
export function watchUpgrade(socket: WebSocket): () => string {
  let failure: string | undefined;
  socket.on('unexpected-response', (_request, response) => {
    readRefusal(response).then((refusal) => {
      failure = refusal;
      // ws leaves a refused upgrade that has a listener here to it: this closes the socket with 1006.
      socket.terminate();
    });
  });
  socket.on('error', (error) => {
    failure ??= `the server could not be reached: ${error.message}`;
  });
  return () => failure ?? 'the WebSocket failed before it opened';
}

function readRefusal(response: IncomingMessage): Promise<string> {
  const status = `${response.statusCode ?? 'no status'}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      const body = printable(Buffer.concat(chunks).subarray(0, MAX_REFUSAL_BYTES).toString('utf8'));
      const cut = length > MAX_REFUSAL_BYTES ? '…' : '';
      resolve(`the server refused the WebSocket upgrade with HTTP ${status}${body ? `: ${body}${cut}` : ''}`);
    };
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length > MAX_REFUSAL_BYTES) done();
    });
    response.once('end', done);
    response.once('error', done);
  });
}

/** The body as one line of text, without control characters that would garble a terminal or a log. */
function printable(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\uFFFD]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
