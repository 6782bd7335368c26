import { createModelProvider, type CPPServer } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { sse, startReplayServer, type ReplayServer } from '../model/replay-server.js';
import { chunksReceived, completion, openThread, pivot, prompt, streamedText } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

/** A chat-completions stream as OpenAI sends it: one event per delta, the finish, then `[DONE]`. */
function chatCompletionStream(deltas: readonly string[]): string {
  const event = (choice: object) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, ...choice }] })}\n\n`;
  return [
    ...deltas.map((content) => event({ delta: { content }, finish_reason: null })),
    event({ delta: {}, finish_reason: 'stop' }),
    'data: [DONE]\n\n',
  ].join('');
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a pivot against an OpenAI-compatible server', () => {
  it('closes the upstream request at once and keeps exactly the text the client was sent', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    // The first answer sends three deltas, then stalls as a slow model does; the second runs to its end.
    const upstream: ReplayServer = await startReplayServer(
      sse(chatCompletionStream(['Once', ' upon', ' a', ' time', ' there', ' was']), { frames: 3, ending: 'hold' }),
      sse(chatCompletionStream(['Rust', ' it is'])),
    );
    cleanups.push(() => upstream.close());
    const store = SqliteStore.open(database.path);
    cleanups.push(() => store.close());
    const server: CPPServer = await startServer({
      store,
      model: createModelProvider({ provider: 'openai-compatible', baseUrl: upstream.url, model: 'gpt-test' }),
    });
    cleanups.push(() => server.close());
    const client = await RawClient.connect(server.url);
    cleanups.push(async () => {
      await client.close();
      expect(client.invalid).toEqual([]);
    });

    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Tell me a story');
    await chunksReceived(client, assistantNodeId, 3);
    const [storyRequest] = upstream.requests;
    let upstreamClosed = false;
    void storyRequest!.closed.then(() => (upstreamClosed = true));
    expect(upstreamClosed).toBe(false);

    const branch = await pivot(client, threadId, assistantNodeId, 'In Rust instead');
    await storyRequest!.closed;
    const sent = streamedText(client, assistantNodeId);
    expect(sent).toBe('Once upon a');
    expect(client.all('CPP_STREAM_HALTED')[0]?.payload).toMatchObject({
      finalContentLength: sent.length,
      lastChunkReceived: ' a',
      reason: 'pivot',
    });
    expect(branch.update.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: sent });

    const { update } = await completion(client, threadId, branch.assistantNodeId);
    expect(update.nodes[branch.assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Rust it is',
      model: 'gpt-test',
    });
    expect(upstream.requests[1]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'Tell me a story' },
        { role: 'assistant', content: 'Once upon a' },
        { role: 'user', content: 'In Rust instead' },
      ],
    });

    const reader = SqliteStore.open(database.path);
    cleanups.push(() => reader.close());
    expect((await reader.loadThread(threadId))?.graph.nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: sent,
    });
  });
});
