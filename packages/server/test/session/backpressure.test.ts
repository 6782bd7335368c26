import { CloseCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { chunksOf, completion, openThread, prompt, streamedText } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { mirrorOf } from '../support/thread-mirror.js';

// Far more than the kernel's socket buffers on loopback hold, so that the server's own buffer must fill.
const CHUNKS = 400;
const CHUNK_TEXT = 'x'.repeat(32 * 1024);
const ANSWER = CHUNK_TEXT.repeat(CHUNKS);
const SOFT_LIMIT = 64 * 1024;

function bigAnswers(): ScriptedModel {
  return new ScriptedModel({ chunks: (index) => (index < CHUNKS ? CHUNK_TEXT : undefined) }, { gated: false });
}

describe('a subscriber that reads too slowly', () => {
  const fixture = useServer();

  it('gets the chunks that waited for it merged, with the offset rules kept, and ends with the exact text', async () => {
    await fixture.start({ model: bigAnswers(), backpressure: { softLimitBytes: SOFT_LIMIT, hardLimitBytes: 256 * 1024 * 1024 } });
    const [reader, slow] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(reader, { patches: true });
    await openThread(slow, { threadId, patches: true });

    slow.socket.pause();
    const { assistantNodeId } = await prompt(reader, threadId, 'A long answer, please');
    await completion(reader, threadId, assistantNodeId);
    expect(streamedText(reader, assistantNodeId)).toBe(ANSWER);
    slow.socket.resume();

    await completion(slow, threadId, assistantNodeId);
    const chunks = chunksOf(slow, assistantNodeId);
    expect(chunks.length).toBeLessThan(CHUNKS);
    expect(Math.max(...chunks.map((chunk) => chunk.delta.length))).toBeGreaterThan(CHUNK_TEXT.length);
    expect(streamedText(slow, assistantNodeId)).toBe(ANSWER);
    const mirror = mirrorOf(slow.frames, threadId);
    expect(mirror.problems).toEqual([]);
    expect(mirror.graph?.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: ANSWER });
  });

  it('is closed with 4429 past the hard limit, while the answer goes on, is kept, and is there when it comes back', async () => {
    await fixture.start({ model: bigAnswers(), backpressure: { softLimitBytes: SOFT_LIMIT, hardLimitBytes: 1024 * 1024 } });
    const [reader, slow] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(reader, { patches: true });
    await openThread(slow, { threadId, patches: true });

    slow.socket.pause();
    const { assistantNodeId } = await prompt(reader, threadId, 'A long answer, please');
    await completion(reader, threadId, assistantNodeId);
    slow.socket.resume();
    expect(await slow.closed).toBe(CloseCode.TOO_MANY_REQUESTS);
    expect(slow.closeReason).toBe('the client reads too slowly');
    expect(ANSWER.startsWith(streamedText(slow, assistantNodeId))).toBe(true);
    expect(streamedText(slow, assistantNodeId).length).toBeLessThan(ANSWER.length);

    const back = await fixture.connect();
    const sync = await openThread(back, { threadId, patches: true });
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: ANSWER });
  });
});
