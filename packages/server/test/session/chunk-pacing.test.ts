import type { StreamChunkFrame } from '@promethea/cpp-protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  chunksOf,
  chunksReceived,
  completion,
  listThreads,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

const INTERVAL_MS = 40;
/** Long enough that text released after an answer's first chunk surely waits for its own. */
const LONG_INTERVAL_MS = 60_000;

/**
 * The server's pacing clock is faked (timers and `performance`), its sockets are real: a chunk leaves exactly when
 * the test moves the clock past its time, and the (fake) time a client receives it at is the time it was sent.
 */
function useFakeClock() {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** Records the (fake) time at which each chunk of the client arrives. */
function chunkArrivals(client: RawClient): Array<{ delta: string; at: number }> {
  const arrivals: Array<{ delta: string; at: number }> = [];
  client.socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; payload: StreamChunkFrame['payload'] };
    if (frame.type === 'CPP_STREAM_CHUNK') arrivals.push({ delta: frame.payload.delta, at: performance.now() });
  });
  return arrivals;
}

describe('chunk pacing (chunkIntervalMs)', () => {
  useFakeClock();

  it('merges deltas arriving within the interval into one chunk, sent an interval after the previous one', async () => {
    const model = new ScriptedModel({ chunks: ['One', ' two', ' three', ' four', ' five'] });
    await fixture.start({ model, chunkIntervalMs: INTERVAL_MS });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const arrivals = chunkArrivals(client);
    const { assistantNodeId } = await prompt(client, threadId, 'Count');
    const call = await model.call(0);
    const start = performance.now();

    // The answer's first delta goes at once.
    call.release(1);
    await chunksReceived(client, assistantNodeId, 1);
    // Two deltas within the interval wait for it, merged: a moment before it ends, nothing more has left.
    vi.advanceTimersByTime(10);
    call.release(1);
    await call.taken();
    vi.advanceTimersByTime(10);
    call.release(1);
    await call.taken();
    vi.advanceTimersByTime(INTERVAL_MS - 21);
    await listThreads(client);
    expect(chunksOf(client, assistantNodeId)).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await chunksReceived(client, assistantNodeId, 2);
    // A delta an interval or more after the last chunk goes at once.
    vi.advanceTimersByTime(INTERVAL_MS + 10);
    call.release(1);
    await chunksReceived(client, assistantNodeId, 3);
    // The answer's end sends what waits at once, before CPP_STREAM_COMPLETED.
    call.releaseAll();
    const { completed } = await completion(client, threadId, assistantNodeId);

    expect(arrivals.map(({ delta, at }) => ({ delta, after: at - start }))).toEqual([
      { delta: 'One', after: 0 },
      { delta: ' two three', after: INTERVAL_MS },
      { delta: ' four', after: 2 * INTERVAL_MS + 10 },
      { delta: ' five', after: 2 * INTERVAL_MS + 10 },
    ]);
    const answer = (await requestSync(client, threadId)).nodes[assistantNodeId]!;
    expect(answer).toMatchObject({ status: 'completed', content: 'One two three four five' });
    expect(streamedText(client, assistantNodeId)).toBe(answer.content);
    expect(completed.finalContentLength).toBe(answer.content.length);
  });

  it('sends text still waiting when the answer ends before CPP_STREAM_COMPLETED, without waiting for the interval', async () => {
    const model = new ScriptedModel({ chunks: ['A', 'B', 'C'] }, { gated: false });
    await fixture.start({ model, chunkIntervalMs: LONG_INTERVAL_MS });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Letters');
    await completion(client, threadId, assistantNodeId);
    expect(chunksOf(client, assistantNodeId).map((chunk) => chunk.delta)).toEqual(['A', 'BC']);
    const types = client.frames.map((frame) => frame.type);
    expect(types.lastIndexOf('CPP_STREAM_CHUNK')).toBeLessThan(types.indexOf('CPP_STREAM_COMPLETED'));
  });

  it('drops text still waiting when the answer is halted: the interrupted node holds exactly what clients were sent', async () => {
    const model = new ScriptedModel((callIndex) =>
      callIndex === 0 ? { chunks: ['Sent', ' held back', ' never'] } : { chunks: ['New'], gated: false },
    );
    await fixture.start({ model, chunkIntervalMs: LONG_INTERVAL_MS });
    const client = await fixture.connect();
    const watcher = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    await openThread(watcher, { threadId });
    const { assistantNodeId } = await prompt(client, threadId, 'Tell me');
    const call = await model.call(0);
    call.release(1);
    await chunksReceived(client, assistantNodeId, 1);
    call.release(1);
    // The second delta has reached the server and waits for its chunk.
    await call.taken();
    await pivot(client, threadId, assistantNodeId, 'Something else');
    const halted = client.all('CPP_STREAM_HALTED')[0]!.payload;
    expect(halted).toMatchObject({
      interruptedNodeId: assistantNodeId,
      finalContentLength: 'Sent'.length,
      lastChunkReceived: 'Sent',
    });
    for (const reader of [client, watcher]) expect(streamedText(reader, assistantNodeId)).toBe('Sent');
    const sync = await requestSync(client, threadId);
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Sent' });
    expect(call.signal.aborted).toBe(true);
  });
});
