import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../../src/model/upstream/http-post.js';
import { ndjsonLines } from '../../src/model/upstream/stream-frames.js';
import { type Reply, type ReplayServer, startReplayServer } from './replay-server.js';

/** Writes each piece of bytes as its own chunk, a turn of the event loop apart. */
function pieces(...parts: Buffer[]): Reply {
  return async (response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (const part of parts) {
      response.write(part);
      await new Promise((resolve) => setImmediate(resolve));
    }
    response.end();
  };
}

const bodyOf = (url: string) =>
  postJson({ url, headers: {}, body: {}, signal: new AbortController().signal, vendor: 'Test vendor' });

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const collected: T[] = [];
  for await (const item of items) collected.push(item);
  return collected;
}

describe('the text of a streamed response body', () => {
  let server: ReplayServer;
  afterEach(() => server.close());

  // "é" is two bytes in UTF-8 and "🙂" four: each is cut between two chunks here.
  const split = [
    Buffer.from('caf'),
    Buffer.from([0xc3]),
    Buffer.from([0xa9, 0x20, 0xf0, 0x9f]),
    Buffer.from([0x99, 0x82]),
  ];

  it('decodes a character whose bytes arrive in two chunks', async () => {
    server = await startReplayServer(pieces(...split));
    expect((await collect(await bodyOf(server.url))).join('')).toBe('café 🙂');
  });

  it('keeps an NDJSON line whole when a character in it is split between chunks', async () => {
    server = await startReplayServer(pieces(Buffer.from('{"text":"'), ...split, Buffer.from('"}\n{"done":true}\n')));
    expect(await collect(ndjsonLines(await bodyOf(server.url), 'Ollama'))).toEqual([
      '{"text":"café 🙂"}',
      '{"done":true}',
    ]);
  });
});
