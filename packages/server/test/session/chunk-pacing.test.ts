import { setTimeout as sleep } from 'node:timers/promises';
import { DemoProvider } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { chunksOf, chunksReceived, completion, openThread, pivot, prompt, requestSync, streamedText } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** Long enough that text released after an answer's first chunk surely waits for its own. */
const LONG_INTERVAL_MS = 60_000;

describe('chunk pacing (chunkIntervalMs)', () => {
  it('merges deltas arriving within the interval: fewer chunks, at least the interval apart, the same text', async () => {
    // A model five times faster than the interval: about five deltas to a chunk.
    const model = new DemoProvider({ delayMs: 6, words: 60 });
    await fixture.start({ model, chunkIntervalMs: 30 });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const arrivals: number[] = [];
    client.socket.on('message', (data) => {
      if (String(data).includes('"type":"CPP_STREAM_CHUNK"')) arrivals.push(performance.now());
    });
    const { assistantNodeId } = await prompt(client, threadId, 'Count');
    const { completed } = await completion(client, threadId, assistantNodeId);
    const sync = await requestSync(client, threadId);
    const answer = sync.nodes[assistantNodeId]!;
    expect(answer.status).toBe('completed');
    expect(streamedText(client, assistantNodeId)).toBe(answer.content);
    expect(completed.finalContentLength).toBe(answer.content.length);
    const chunks = chunksOf(client, assistantNodeId);
    expect(chunks.length).toBeLessThan(60 / 2);
    // The answer's first delta goes at once: one word.
    expect(chunks[0]!.delta.trim()).not.toContain(' ');
    // Every chunk but the last (sent when the answer ended) left an interval after the one before; arrival adds
    // jitter, and timers may fire a millisecond early: "apart" with that slack.
    for (let index = 1; index < arrivals.length - 1; index += 1) expect(arrivals[index]! - arrivals[index - 1]!).toBeGreaterThanOrEqual(20);
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
    const model = new ScriptedModel((callIndex) => (callIndex === 0 ? { chunks: ['Sent', ' held back', ' never'] } : { chunks: ['New'], gated: false }));
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
    // The second delta reaches the server and waits for its chunk; give the server time to take it in.
    await sleep(100);
    await pivot(client, threadId, assistantNodeId, 'Something else');
    const halted = client.all('CPP_STREAM_HALTED')[0]!.payload;
    expect(halted).toMatchObject({ interruptedNodeId: assistantNodeId, finalContentLength: 'Sent'.length, lastChunkReceived: 'Sent' });
    for (const reader of [client, watcher]) expect(streamedText(reader, assistantNodeId)).toBe('Sent');
    const sync = await requestSync(client, threadId);
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Sent' });
    expect(call.signal.aborted).toBe(true);
  });
});
