import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedFetch, LineTooLongError } from '../../src/model/upstream/bounded-fetch.js';
import { MAX_STREAM_FRAME_LENGTH } from '../../src/model/upstream/stream-limits.js';
import { endlessLine, type ReplayServer, startReplayServer } from './replay-server.js';

const LINE_FEED = 0x0a;
const post = (url: string) => boundedFetch()(url, { method: 'POST', body: '{}' });

/** Random bytes, line feeds only where placed: a first line of exactly the bound, then lines of 1000 bytes. */
function linesUpToTheBound(length: number): Buffer {
  const body = Buffer.from(randomBytes(length).map((byte) => (byte === LINE_FEED ? 0 : byte)));
  for (let lineFeed = MAX_STREAM_FRAME_LENGTH; lineFeed < length; lineFeed += 1001) body[lineFeed] = LINE_FEED;
  return body;
}

/** A fetch that answers with exactly these chunks, for chunk boundaries that TCP would not keep. */
function chunked(...chunks: string[]): typeof fetch {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return boundedFetch(async () => new Response(body));
}

describe('boundedFetch', () => {
  let server: ReplayServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('passes a body of lines up to the bound through byte for byte, sent in small chunks', async () => {
    const sent = linesUpToTheBound(3 * MAX_STREAM_FRAME_LENGTH);
    server = await startReplayServer(async (response) => {
      response.writeHead(201, 'Made', { 'content-type': 'application/octet-stream', 'x-vendor': 'kept' });
      for (let start = 0; start < sent.length; start += 4096) {
        response.write(sent.subarray(start, start + 4096));
        await nextTurn();
      }
      response.end();
    });
    const response = await post(server.url);
    expect(response).toMatchObject({ status: 201, statusText: 'Made' });
    expect(response.headers.get('x-vendor')).toBe('kept');
    expect(Buffer.from(await response.arrayBuffer()).equals(sent)).toBe(true);
  });

  it('fails a body that runs past the bound without a line feed, and cancels the upstream response', {
    timeout: 10_000,
  }, async () => {
    server = await startReplayServer(endlessLine('text/event-stream', 'data: first\n\n'));
    const response = await post(server.url);
    await expect(response.text()).rejects.toBeInstanceOf(LineTooLongError);
    await server.requests[0]?.closed;
  });

  it('counts a line across chunks, up to its line feed, and from zero after it', async () => {
    const almost = 'x'.repeat(MAX_STREAM_FRAME_LENGTH - 1);
    await expect((await chunked(almost, 'x\n', almost, 'x\nok')('')).text()).resolves.toHaveLength(
      2 * MAX_STREAM_FRAME_LENGTH + 4,
    );
    await expect((await chunked(almost, 'xx\n')('')).text()).rejects.toThrow(
      `a line ran past ${MAX_STREAM_FRAME_LENGTH} bytes without ending`,
    );
    await expect((await chunked(`a\n${almost}xx\nb`)('')).text()).rejects.toBeInstanceOf(LineTooLongError);
  });
});
