import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MAX_STREAM_FRAME_LENGTH } from '../../src/model/upstream/stream-limits.js';

/** What the replay server received, and a promise that settles when that request's connection is closed. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  closed: Promise<void>;
}

/** Answers one request; `closed` settles when its connection closes. */
export type Reply = (response: ServerResponse, closed: Promise<void>) => Promise<void> | void;

export interface ReplayServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  requests: RecordedRequest[];
  /** TCP connections accepted so far: keep-alive reuse shows as fewer connections than requests. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A local HTTP server standing in for a model vendor: the n-th request gets `replies[n]` (the last reply repeats),
 * and every request is recorded with its parsed JSON body.
 */
export async function startReplayServer(...replies: Reply[]): Promise<ReplayServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (request, response) => {
    const closed = once(response, 'close').then(() => undefined);
    let text = '';
    for await (const chunk of request) text += String(chunk);
    requests.push({
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body: JSON.parse(text),
      closed,
    });
    const reply = replies[Math.min(requests.length, replies.length) - 1];
    await reply?.(response, closed);
  });
  let connections = 0;
  server.on('connection', () => (connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

export interface StreamOptions {
  contentType: string;
  /** What ends a frame: a blank line for SSE, a newline for NDJSON. */
  frameEnd: string;
  /** How many frames (SSE events or NDJSON lines) of the fixture to send; all by default. */
  frames?: number;
  /**
   * After the frames: end the response (default), reset the connection, or hold it open until the client leaves.
   * `at-once` sends the frames and the end of the response in one write, so the whole answer arrives before the
   * client has read any of it.
   */
  ending?: 'end' | 'reset' | 'hold' | 'at-once';
}

/** Streams a fixture frame by frame, each frame its own write, as a vendor's server flushes them. */
export function streamFixture(text: string, options: StreamOptions): Reply {
  return async (response, closed) => {
    response.writeHead(200, { 'content-type': options.contentType, 'cache-control': 'no-cache' });
    const frames = splitFrames(text, options.frameEnd).slice(0, options.frames);
    if (options.ending === 'at-once') {
      response.end(frames.join(''));
      return;
    }
    for (const frame of frames) {
      response.write(frame);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (options.ending === 'reset') response.socket?.destroy();
    else if (options.ending === 'hold') await closed;
    else response.end();
  };
}

type FrameOptions = Pick<StreamOptions, 'frames' | 'ending'>;

export const sse = (text: string, options: FrameOptions = {}): Reply =>
  streamFixture(text, { contentType: 'text/event-stream', frameEnd: '\n\n', ...options });

export const ndjson = (text: string, options: FrameOptions = {}): Reply =>
  streamFixture(text, { contentType: 'application/x-ndjson', frameEnd: '\n', ...options });

/** An error response with a JSON body, as vendors send for 401, 404, 429 and 5xx. */
export function status(code: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (response) => {
    response.writeHead(code, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
}

/**
 * Sends `frames`, then four times MAX_STREAM_FRAME_LENGTH bytes without a line feed, and never ends: only a bound on
 * the pending line stops the reader.
 */
export function endlessLine(contentType: string, frames: string): Reply {
  return async (response, closed) => {
    response.writeHead(200, { 'content-type': contentType });
    response.write(frames);
    const piece = 'x'.repeat(64 * 1024);
    for (let sent = 0; sent < 4 * MAX_STREAM_FRAME_LENGTH && !response.destroyed; sent += piece.length) {
      response.write(piece);
      await nextTurn();
    }
    await closed;
  };
}

/** Accepts the request and never answers: for the first-token timeout. */
export const silence: Reply = async (_response, closed) => {
  await closed;
};

/** The frames of a fixture, each with its terminator. */
function splitFrames(text: string, frameEnd: string): string[] {
  return text
    .split(frameEnd)
    .filter((frame) => frame.trim() !== '')
    .map((frame) => frame + frameEnd);
}
