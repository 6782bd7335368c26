import WebSocket from 'ws';
import type { Handshake } from './connection.js';

/** How a server answered an upgrade request it was expected to refuse. */
export type UpgradeAnswer = { refused: true; status: number; body: string } | { refused: false };

/** Sends an upgrade request and reports the HTTP refusal, or that the server accepted it. */
export function attemptUpgrade(handshake: Handshake, timeoutMs: number): Promise<UpgradeAnswer> {
  const socket = new WebSocket(handshake.url, handshake.protocols, {
    headers: handshake.headers,
    handshakeTimeout: timeoutMs,
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close(1000);
      resolve({ refused: false });
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve({ refused: true, status: response.statusCode ?? 0, body });
        request.destroy();
      });
    });
  });
}
