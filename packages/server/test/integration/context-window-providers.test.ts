import { createModelProvider, type CPPServer, MemoryStore, type ProviderKind } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, ndjson, type ReplayServer, sse, startReplayServer } from '../model/replay-server.js';
import { completion, openThread, prompt } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { TestClock, ThreadDriver } from '../store/thread-driver.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** 600 ASCII code units: 150 tokens by the estimate, 154 with a message's overhead. */
const LONG = 'lorem '.repeat(100);
/** Room for 250 estimated tokens of branch: the first prompt (6), an answer (5) and a long prompt (154) fit; two long ones do not. */
const WINDOW = { contextWindow: 250 + 100 + 3, reservedOutputTokens: 100 };

/** The texts of a request's messages in its vendor's format, each with its role; a system message left aside. */
function turns(body: unknown): Array<[string, string]> {
  const { messages } = body as { messages: Array<{ role: string; content: string | Array<{ text?: string }> }> };
  return messages
    .filter((message) => message.role !== 'system')
    .map(({ role, content }) => [
      role,
      typeof content === 'string' ? content : content.map((part) => part.text ?? '').join(''),
    ]);
}

const VENDORS: Array<[ProviderKind, () => ReturnType<typeof sse>]> = [
  ['openai-compatible', () => sse(fixture('openai-chat-stream.sse'))],
  ['anthropic', () => sse(fixture('anthropic-messages-stream.sse'))],
  ['ollama', () => ndjson(fixture('ollama-chat-stream.ndjson'))],
];

describe("each vendor's request carries the fitted branch", () => {
  it.each(VENDORS)('%s: the first prompt, then the latest turns that fit', async (provider, reply) => {
    const upstream: ReplayServer = await startReplayServer(reply());
    cleanups.push(() => upstream.close());
    // A thread already long: u0 a0 u1 a1, as a server's store holds it; the prompt is the model's one call.
    const store = new MemoryStore();
    const driver = await ThreadDriver.create(store, new TestClock(), 'anonymous');
    const first = await driver.prompt('first');
    await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'First answer' });
    const second = await driver.prompt(LONG, { parentNodeId: first.assistantNodeId });
    await driver.finish({ nodeId: second.assistantNodeId, status: 'completed', content: 'Second one' });
    const server: CPPServer = await startServer({
      store,
      models: [
        {
          provider: createModelProvider({
            provider,
            baseUrl: upstream.url,
            model: 'test-model',
            apiKey: 'sk-test-0123456789',
            systemPrompt: 'Be brief.',
          }),
          ...WINDOW,
        },
      ],
    });
    cleanups.push(() => server.close());
    const client = await RawClient.connect(server.url);
    cleanups.push(async () => {
      await client.close();
      expect(client.invalid).toEqual([]);
    });
    await openThread(client, { threadId: driver.threadId, patches: true });
    const third = await prompt(client, driver.threadId, LONG);
    await completion(client, driver.threadId, third.assistantNodeId);

    // u1 would follow the first prompt without its answer: left out with a0.
    expect(third.update.nodes[third.assistantNodeId]!.context).toEqual({
      fromNodeId: second.assistantNodeId,
      omittedNodes: 2,
    });
    expect(upstream.requests).toHaveLength(1);
    expect(turns(upstream.requests[0]!.body)).toEqual([
      ['user', 'first'],
      ['assistant', 'Second one'],
      ['user', LONG],
    ]);
  });
});
