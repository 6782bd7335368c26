import { once } from 'node:events';
import { CloseCode } from '@promethea/cpp-protocol';
import type { CPPServerOptions } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { chunksOf, completion, openThread, prompt, streamedText } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { mirrorOf } from '../support/thread-mirror.js';
import type { RawClient } from '../support/raw-client.js';

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
    await fixture.start({
      model: bigAnswers(),
      backpressure: { softLimitBytes: SOFT_LIMIT, hardLimitBytes: 256 * 1024 * 1024 },
    });
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
    // The slow client reads again only after the answer: until then it is given the time to take its close frame.
    await fixture.start({
      model: bigAnswers(),
      backpressure: { softLimitBytes: SOFT_LIMIT, hardLimitBytes: 1024 * 1024 },
      closeHandshakeMs: 60_000,
    });
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

  it('is closed with 4429 when one frame alone, the sync of a big thread, takes it past the hard limit', async () => {
    await fixture.start(bigThreadServer());
    const threadId = await bigThread(await fixture.connect());

    const late = await fixture.connect();
    late.send('CPP_THREAD_OPEN', { threadId });
    expect(await late.closed).toBe(CloseCode.TOO_MANY_REQUESTS);
    expect(late.closeReason).toBe('the client reads too slowly');
  });

  it('lets go of a client that never reads once the closing handshake is due, and the big frame it was sent with it', async () => {
    const server = await fixture.start(bigThreadServer());
    const threadId = await bigThread(await fixture.connect());

    const stuck = await fixture.connect();
    stuck.socket.pause();
    const gone = once(server, 'disconnect');
    stuck.send('CPP_THREAD_OPEN', { threadId });
    // Without the frame counted, or without the bound on the closing handshake, only the heartbeat would drop it.
    await gone;
    expect(server.connectionCount).toBe(1);
    stuck.socket.resume();
  });
});

/** Frames of 1 MiB, a hard limit of 2 MiB: what a thread of 12 MiB is synced in is far more than both and than the kernel's buffers. */
function bigThreadServer(): CPPServerOptions {
  return {
    model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }),
    maxFrameBytes: 2 * 1024 * 1024,
    limits: { maxPromptLength: 0, maxThreadBytes: 0 },
    backpressure: { softLimitBytes: SOFT_LIMIT, hardLimitBytes: 2 * 1024 * 1024 },
  };
}

async function bigThread(client: RawClient): Promise<string> {
  const { threadId } = await openThread(client, { patches: true });
  for (let index = 0; index < 12; index += 1)
    await prompt(client, threadId, String.fromCharCode(97 + index).repeat(1024 * 1024));
  return threadId;
}
