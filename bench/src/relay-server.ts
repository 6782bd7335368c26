import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveRequests } from './bench-process.js';
import { postChatCompletion } from './chat-request.js';

export interface RelayServerReady {
  url: string;
}

/** What a client asks the relay: that many chat completions of the model server at once. */
export interface RelayRequest {
  type: 'relay';
  payload: { answers: number };
}

/** What the relay sends back: each answer's first SSE `data:` line as it comes, then each answer's end. */
export type RelayFrame = { type: 'RELAY_FIRST'; payload: { data: string } } | { type: 'RELAY_END' };

/**
 * The bare relay, the floor of the models measure: a WebSocket server that, for each message, asks the model server
 * (the first argument, its base URL) for that many chat completions at once as CPP's provider asks (node:http,
 * keep-alive), and forwards each answer's first SSE data line as a message of its own. None of CPP's work (frames
 * checked, a plan, a commit, a patch, the provider's parsing, pacing) stands between the model server and the client:
 * what three answers cost it over one is what the machine adds.
 */
const baseUrl = process.argv[2]!;

const http = createServer();
const sockets = new WebSocketServer({ server: http });
sockets.on('connection', (socket) => {
  socket.on('message', (data) => {
    const { payload } = JSON.parse(data.toString()) as RelayRequest;
    for (let answer = 0; answer < payload.answers; answer += 1) void relay(socket);
  });
});

async function relay(socket: WebSocket): Promise<void> {
  const response = await postChatCompletion(baseUrl);
  response.setEncoding('utf8');
  let text = '';
  let first: string | undefined;
  for await (const piece of response as AsyncIterable<string>) {
    if (first !== undefined) continue;
    text += piece;
    first = /^data: .*(?=\n)/m.exec(text)?.[0];
    if (first !== undefined) send(socket, { type: 'RELAY_FIRST', payload: { data: first } });
  }
  send(socket, { type: 'RELAY_END' });
}

function send(socket: WebSocket, frame: RelayFrame): void {
  socket.send(JSON.stringify(frame));
}

await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
serveRequests({ url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}/` } satisfies RelayServerReady, {
  stop: async () => {
    for (const client of sockets.clients) client.terminate();
    sockets.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  },
});
