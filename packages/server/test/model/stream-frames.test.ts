import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../../src/model/upstream/http-post.js';
import { ProviderError } from '../../src/model/provider-error.js';
import { serverSentEvents } from '../../src/model/upstream/stream-frames.js';
import { type Reply, type ReplayServer, startReplayServer } from './replay-server.js';

/** Sends the whole text in one write, so that every event in it reaches the parser in one chunk. */
function oneWrite(text: string): Reply {
  return (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(text);
  };
}

async function read(url: string): Promise<{ data: string[]; error?: unknown }> {
  const body = await postJson({
    url,
    headers: {},
    body: {},
    signal: new AbortController().signal,
    vendor: 'Test vendor',
  });
  const data: string[] = [];
  try {
    for await (const event of serverSentEvents(body, 'Test vendor')) data.push(event.data);
  } catch (error) {
    return { data, error };
  }
  return { data };
}

describe('server-sent events of a response body', () => {
  let server: ReplayServer;
  afterEach(() => server.close());

  it('reads events split across chunks and several events in one chunk, joining multi-line data', async () => {
    server = await startReplayServer(async (response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of [
        'data: one\n\nda',
        'ta: two\n',
        '\ndata: thr',
        'ee\ndata: lines\n\n: a comment\n\nevent: x\ndata: four\n\n',
      ]) {
        response.write(piece);
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    });
    expect(await read(server.url)).toEqual({ data: ['one', 'two', 'three\nlines', 'four'] });
  });

  it('delivers the events before a malformed line of the same chunk, then fails as a malformed stream', async () => {
    server = await startReplayServer(
      oneWrite('data: first\n\ndata: second\n\n<html>Bad gateway</html>\n\ndata: after\n\n'),
    );
    const { data, error } = await read(server.url);
    expect(data).toEqual(['first', 'second']);
    expect(ProviderError.isInstance(error)).toBe(true);
    expect((error as ProviderError).message).toMatch(
      /^Test vendor sent a malformed stream: Unknown field "<html>Bad gateway<\/h…"/,
    );
  });

  it('fails as a malformed stream when an event grows past the size bound', async () => {
    server = await startReplayServer(oneWrite(`data: ${'x'.repeat(1024 * 1024 + 1)}`));
    const { data, error } = await read(server.url);
    expect(data).toEqual([]);
    expect((error as ProviderError).message).toMatch(/^Test vendor sent a malformed stream: .*max buffer size/);
  });
});
