import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeServerFrame } from '@promethea/cpp-protocol';
// The server's own pacing, an internal the package does not export: the baseline merges chunks as CPP does.
import { ChunkPacer } from '../../packages/server/dist/engine/chunk-pacer.js';
import { WebSocketServer } from 'ws';
import { pacedTokens } from './paced-tokens.js';

/** What a baseline client asks for; JSON text frames like CPP's. */
export type BaselineRequest =
  | { type: 'echo'; payload: unknown }
  | { type: 'stream'; payload: { threadId: string; nodeId: string } }
  /** Keep `text`, to send back on every `resend`: the transfer a full sync is compared with. */
  | { type: 'keep'; payload: { text: string } }
  | { type: 'resend' };

/** The paced model's pace, and CPP's chunk interval, so that both servers push the same frames. */
export interface BaselineStreams {
  intervalMs: number;
  tokens: number;
  chunkIntervalMs: number;
}

export interface BaselineServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The raw baseline: a bare `ws` server doing the least that CPP's work can be compared with. It echoes a frame
 * back (the round trip a pivot is compared with), pushes the very frames a CPP stream sends on the same schedule
 * (the same tokens, merged into chunks by CPP's own `ChunkPacer`), and sends back a text it was given to keep (the
 * transfer a full sync is compared with: the sync's very bytes, so that the client reads the same frame from either
 * server). It keeps them encoded, as the least a server can send: a write of ready bytes.
 */
export async function startBaselineServer(streams: BaselineStreams): Promise<BaselineServer> {
  const http = createServer();
  const sockets = new WebSocketServer({ server: http });
  sockets.on('connection', (socket) => {
    const controller = new AbortController();
    let kept = Buffer.alloc(0);
    socket.on('close', () => controller.abort());
    socket.on('message', (data) => {
      const text = data.toString();
      // An echo is sent back as it came, unread: the bare round trip.
      if (text.startsWith('{"type":"echo"')) return socket.send(text);
      const request = JSON.parse(text) as BaselineRequest;
      if (request.type === 'stream') {
        const target = request.payload;
        void pushPacedChunks(streams, controller.signal, (delta, offset) =>
          socket.send(encodeServerFrame('CPP_STREAM_CHUNK', { ...target, offset, delta })),
        );
      } else if (request.type === 'keep') kept = Buffer.from(request.payload.text);
      else if (request.type === 'resend') socket.send(kept, { binary: false });
    });
  });

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Pushes one answer: the paced model's tokens, merged into chunks by CPP's own `ChunkPacer` at the same interval,
 * each handed to `send` with the offset of its text. What the raw baseline and every peer send, so that they carry
 * the very chunks a CPP stream carries on the same schedule. Ends (dropping what waits) when `signal` aborts.
 */
export async function pushPacedChunks(
  { intervalMs, tokens, chunkIntervalMs }: BaselineStreams,
  signal: AbortSignal,
  send: (delta: string, offset: number) => void,
): Promise<void> {
  let offset = 0;
  const pacer = new ChunkPacer(chunkIntervalMs, (delta) => {
    send(delta, offset);
    offset += delta.length;
  });
  try {
    for await (const token of pacedTokens(intervalMs, tokens, signal)) pacer.push(token);
    pacer.flush();
  } catch {
    // Aborted: the client went away.
    pacer.discard();
  }
}
