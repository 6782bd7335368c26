import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CPP_SESSION_PATH, encodeServerFrame } from '@promethea/cpp-protocol';
import type { CPPServerOptions } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../packages/server/test/support/start-server.js';
import { startBaselineServer, type BaselineServer, type BaselineStreams } from '../src/baseline-server.js';
import { connectLoadStream } from '../src/load-stream.js';
import type { LoadTarget } from '../src/load-target.js';
import { PacedProvider } from '../src/paced-provider.js';
import { readDueTimes } from '../src/paced-tokens.js';
import { SSE_CHAT_PATH } from '../src/peer-protocols.js';
import { startSocketIoServer } from '../src/socketio-server.js';
import { startSseServer } from '../src/sse-server.js';

const TOKEN_MS = 5;
const CHUNK_MS = 20;
const TOKENS = 100_000;

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Received {
  frames: number;
  dueTimes: number[];
}

/** Starts one load stream and collects what it hands over until `tokens` tokens have come. */
async function stream(target: LoadTarget, tokens: number): Promise<Received & { firstDue: number }> {
  const received: Received = { frames: 0, dueTimes: [] };
  let enough = (): void => undefined;
  const collected = new Promise<void>((resolve) => (enough = resolve));
  const load = await connectLoadStream(target, (frame, from) => {
    received.frames += 1;
    readDueTimes(frame, from, (due) => received.dueTimes.push(due));
    if (received.dueTimes.length >= tokens) enough();
  });
  cleanup.push(() => load.close());
  const firstDue = await load.start(performance.now());
  if (tokens > 0) await collected;
  return { ...received, dueTimes: received.dueTimes.slice(), firstDue };
}

async function paced(
  start: (streams: BaselineStreams) => Promise<BaselineServer>,
  chunkIntervalMs = CHUNK_MS,
): Promise<number> {
  const server = await start({ intervalMs: TOKEN_MS, tokens: TOKENS, chunkIntervalMs });
  cleanup.push(() => server.close());
  return server.port;
}

async function raw(chunkIntervalMs: number): Promise<LoadTarget> {
  return { url: `ws://127.0.0.1:${await paced(startBaselineServer, chunkIntervalMs)}/`, kind: 'raw' };
}

async function cpp(options: CPPServerOptions = {}): Promise<LoadTarget> {
  const server = await startServer({
    model: new PacedProvider(TOKEN_MS, TOKENS),
    chunkIntervalMs: CHUNK_MS,
    ...options,
  });
  cleanup.push(() => server.close());
  return { url: `ws://127.0.0.1:${server.port}${CPP_SESSION_PATH}`, kind: 'cpp' };
}

/** Every token of the answer, in order, due one interval apart (one whose timer fired early carries when it left). */
function expectConsecutive(dueTimes: readonly number[], firstDue: number): void {
  expect(dueTimes[0]).toBeCloseTo(firstDue, 6);
  dueTimes.forEach((due, index) => {
    expect(due - firstDue).toBeLessThanOrEqual(index * TOKEN_MS + 1e-6);
    if (index > 0) expect(due).toBeGreaterThan(dueTimes[index - 1]!);
  });
}

describe('a load stream', () => {
  it('gets every token from the raw baseline, several to a chunk as CPP paces them', async () => {
    const { frames, dueTimes, firstDue } = await stream(await raw(CHUNK_MS), 60);
    expectConsecutive(dueTimes, firstDue);
    expect(dueTimes.length).toBeGreaterThan(2 * frames);
  });

  it('gets one chunk per token from the raw baseline when the chunk interval is 0', async () => {
    const { frames, dueTimes, firstDue } = await stream(await raw(0), 40);
    expectConsecutive(dueTimes, firstDue);
    expect(frames).toBe(dueTimes.length);
  });

  it('gets every token of a CPP answer, in paced chunks, and nothing but chunks', async () => {
    const { frames, dueTimes, firstDue } = await stream(await cpp(), 60);
    expectConsecutive(dueTimes, firstDue);
    expect(dueTimes.length).toBeGreaterThan(2 * frames);
  });

  it('gets every token from the Socket.IO peer, several to a chunk as CPP paces them', async () => {
    const { frames, dueTimes, firstDue } = await stream(
      { url: `http://127.0.0.1:${await paced(startSocketIoServer)}`, kind: 'socketio' },
      60,
    );
    expectConsecutive(dueTimes, firstDue);
    expect(dueTimes.length).toBeGreaterThan(2 * frames);
  });

  it('gets every token from the SSE peer, several to a chunk as CPP paces them', async () => {
    const { frames, dueTimes, firstDue } = await stream(
      { url: `http://127.0.0.1:${await paced(startSseServer)}${SSE_CHAT_PATH}`, kind: 'sse' },
      60,
    );
    expectConsecutive(dueTimes, firstDue);
    expect(dueTimes.length).toBeGreaterThan(2 * frames);
  });

  it('reads SSE events split across reads and several in one read', async () => {
    const events = Array.from(
      { length: 6 },
      (_, index) =>
        `data: ${encodeServerFrame('CPP_STREAM_CHUNK', { threadId: 'thr_1', nodeId: 'msg_1', offset: 0, delta: `${index === 0 ? '' : ' '}${index + 1}.50` })}\n\n`,
    ).join('');
    // Writes cut mid-event and mid-token, one of them carrying the end of one event and two more whole.
    const cuts = [0, 20, events.indexOf('2.50') + 2, events.indexOf('5.50') - 3, events.length];
    const http = createServer((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = (piece: number): void => {
        if (piece + 1 >= cuts.length) return;
        response.write(events.slice(cuts[piece], cuts[piece + 1]), () => setImmediate(() => write(piece + 1)));
      };
      write(0);
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      http.closeAllConnections();
      http.close();
    });
    const { dueTimes, firstDue } = await stream(
      { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}${SSE_CHAT_PATH}`, kind: 'sse' },
      6,
    );
    expect(firstDue).toBe(1.5);
    expect(dueTimes).toEqual([1.5, 2.5, 3.5, 4.5, 5.5, 6.5]);
  });

  it("fails its start with the server's error when the server refuses it", async () => {
    const target = await cpp({ limits: { maxThreadsPerDid: 1 } });
    await stream(target, 0);
    await expect(stream(target, 0)).rejects.toThrow(/CPP_ERROR RATE_LIMITED/);
  });
});
