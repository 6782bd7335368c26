import { createModelProvider, type CPPServer, type ProviderConfig } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY } from '../model/provider-contract.js';
import { fixture, ndjson, sse, startReplayServer, type Reply, type ReplayServer } from '../model/replay-server.js';
import { chunksReceived, completion, openThread, pivot, prompt, streamedText } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

interface Vendor {
  name: string;
  config: Omit<ProviderConfig, 'baseUrl'>;
  /** The vendor's reasoning stream, paced frame by frame up to its two reasoning deltas, then held open. */
  reasoning: Reply;
  /** The answer to the pivot's prompt. */
  answer: Reply;
}

// Each fixture reasons "The user greets me." then " Greet back." before it answers, in its vendor's own format.
const VENDORS: Vendor[] = [
  {
    name: 'OpenAI-compatible (DeepSeek reasoning_content, OpenRouter reasoning)',
    config: { provider: 'openai-compatible', model: 'deepseek-reasoner' },
    reasoning: sse(fixture('openai-reasoning-stream.sse'), { frames: 3, ending: 'hold' }),
    answer: sse(fixture('openai-chat-stream.sse')),
  },
  {
    name: 'Anthropic (extended thinking)',
    config: { provider: 'anthropic', apiKey: API_KEY, thinkingBudgetTokens: 1024 },
    reasoning: sse(fixture('anthropic-thinking-stream.sse'), { frames: 4, ending: 'hold' }),
    answer: sse(fixture('anthropic-messages-stream.sse')),
  },
  {
    name: 'Ollama (message.thinking)',
    config: { provider: 'ollama', model: 'qwen3:8b' },
    reasoning: ndjson(fixture('ollama-thinking-stream.ndjson'), { frames: 2, ending: 'hold' }),
    answer: ndjson(fixture('ollama-chat-stream.ndjson')),
  },
];

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(VENDORS)('a pivot while the model reasons, against $name', (vendor) => {
  it('closes the upstream request, keeps the reasoning as the client had shown it and no answer, and stores it', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const upstream: ReplayServer = await startReplayServer(vendor.reasoning, vendor.answer);
    cleanups.push(() => upstream.close());
    const store = SqliteStore.open(database.path);
    cleanups.push(() => store.close());
    const server: CPPServer = await startServer({
      store,
      model: createModelProvider({ ...vendor.config, baseUrl: upstream.url }),
    });
    cleanups.push(() => server.close());
    const client = await RawClient.connect(server.url);
    cleanups.push(async () => {
      await client.close();
      expect(client.invalid).toEqual([]);
    });

    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    await chunksReceived(client, assistantNodeId, 2, 'reasoning');
    expect(streamedText(client, assistantNodeId, 'reasoning')).toBe('The user greets me. Greet back.');
    expect(streamedText(client, assistantNodeId)).toBe('');
    const [reasoningRequest] = upstream.requests;

    // The person had read "The user greets me. Gre" when they pivoted.
    const branch = await pivot(client, threadId, assistantNodeId, 'Answer in French', {
      receivedContentLength: 0,
      receivedReasoningLength: 23,
    });
    await reasoningRequest!.closed;

    expect(client.all('CPP_STREAM_HALTED')[0]?.payload).toEqual({
      interruptedNodeId: assistantNodeId,
      finalContentLength: 0,
      finalReasoningLength: 23,
      part: 'reasoning',
      lastChunkReceived: ' Gre',
      threadId,
      reason: 'pivot',
    });
    expect(branch.update.nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: '',
      reasoning: 'The user greets me. Gre',
    });
    await completion(client, threadId, branch.assistantNodeId);
    // The interrupted answer said nothing: neither it nor its reasoning is in the next request.
    expect(JSON.stringify(upstream.requests[1]?.body)).not.toMatch(/greets/);

    const reader = SqliteStore.open(database.path);
    cleanups.push(() => reader.close());
    expect((await reader.loadThread(threadId))?.graph.nodes[assistantNodeId]).toMatchObject({
      status: 'interrupted',
      content: '',
      reasoning: 'The user greets me. Gre',
    });
  });
});
