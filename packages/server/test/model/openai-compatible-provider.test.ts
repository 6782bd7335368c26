import { afterEach, describe, expect, it } from 'vitest';
import { CONTINUE_INSTRUCTION } from '../../src/model/model-provider.js';
import { createModelProvider } from '../../src/model/provider-factory.js';
import { API_KEY, drain, providerContract, streamOf } from './provider-contract.js';
import { fixture, type ReplayServer, sse, startReplayServer } from './replay-server.js';

const STREAM = fixture('openai-chat-stream.sse');

providerContract({
  name: 'openai-compatible',
  create: (baseUrl, config) =>
    createModelProvider({ provider: 'openai-compatible', baseUrl, model: 'gpt-4o-mini', ...config }),
  reply: (options) => sse(STREAM, options),
  // The role-only first delta, then "Hello".
  framesToFirstText: 2,
  framesBeforeTerminator: 6,
  malformed: sse(fixture('openai-malformed.sse')),
  errorBody: (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
  finish: { finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 3 } },
  // DeepSeek and vLLM send `reasoning_content`, OpenRouter and others `reasoning`: the fixture has both.
  reasoning: sse(fixture('openai-reasoning-stream.sse')),
  reasoningFinish: { finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 12 } },
});

describe('openai-compatible: the request and vendor specifics', () => {
  let server: ReplayServer;
  afterEach(() => server.close());

  it('posts the branch as chat messages after the system prompt, with streaming and usage on', async () => {
    server = await startReplayServer(sse(STREAM));
    const provider = createModelProvider({
      provider: 'openai-compatible',
      baseUrl: `${server.url}/v1/`,
      model: 'llama3.2',
      apiKey: API_KEY,
      systemPrompt: 'Be brief.',
      temperature: 0.2,
      maxTokens: 256,
    });
    const messages = [
      { role: 'user' as const, content: 'Plan a trip' },
      { role: 'assistant' as const, content: 'Sure, where to' },
      { role: 'user' as const, content: 'Japan instead' },
    ];
    await drain(streamOf(provider, messages));
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    expect(request?.body).toEqual({
      model: 'llama3.2',
      messages: [{ role: 'system', content: 'Be brief.' }, ...messages],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 256,
    });
    expect(provider).toMatchObject({ provider: 'openai-compatible', model: 'llama3.2' });
  });

  it.each([
    ['o3-mini', {}],
    ['openai/gpt-5-mini', {}],
    ['my-deployment', { reasoning: true }],
  ])('limits the answer of %s, a reasoning model, with max_completion_tokens', async (model, config) => {
    server = await startReplayServer(sse(STREAM));
    await drain(
      streamOf(
        createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model, maxTokens: 512, ...config }),
      ),
    );
    expect(server.requests[0]?.body).toMatchObject({ model, max_completion_tokens: 512 });
    expect(server.requests[0]?.body).not.toHaveProperty('max_tokens');
  });

  it('continues a partial answer given as the last assistant message, followed by the instruction to go on with it', async () => {
    server = await startReplayServer(sse(STREAM));
    const provider = createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'gpt-4o-mini' });
    const messages = [
      { role: 'user' as const, content: 'Plan a trip' },
      { role: 'assistant' as const, content: 'Day one: Kyoto. ' },
    ];
    await drain(provider.stream({ messages, continues: true, signal: new AbortController().signal }));
    expect((server.requests[0]!.body as { messages: unknown }).messages).toEqual([
      ...messages,
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
  });

  it('keeps max_tokens for a model not taken to reason', async () => {
    server = await startReplayServer(sse(STREAM));
    await drain(
      streamOf(
        createModelProvider({
          provider: 'openai-compatible',
          baseUrl: server.url,
          model: 'o3-mini',
          reasoning: false,
          maxTokens: 512,
        }),
      ),
    );
    expect(server.requests[0]?.body).toMatchObject({ max_tokens: 512 });
    expect(server.requests[0]?.body).not.toHaveProperty('max_completion_tokens');
  });

  it('sends no authorization header to a local server without a key', async () => {
    server = await startReplayServer(sse(STREAM));
    await drain(streamOf(createModelProvider({ provider: 'openai-compatible', baseUrl: server.url })));
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.requests[0]?.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  it('fails with the message of an error chunk sent mid-stream (OpenRouter, vLLM)', async () => {
    server = await startReplayServer(sse(fixture('openai-error-mid-stream.sse')));
    const { text, error } = await drain(
      streamOf(createModelProvider({ provider: 'openai-compatible', baseUrl: server.url })),
    );
    expect(text).toBe('Hello');
    expect(error?.message).toBe('OpenAI-compatible server reported an error: Provider disconnected');
  });

  it('fails on a line that is not server-sent events', async () => {
    server = await startReplayServer(
      sse('data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n<html>Bad gateway</html>\n\n'),
    );
    const { text, error } = await drain(
      streamOf(createModelProvider({ provider: 'openai-compatible', baseUrl: server.url })),
    );
    expect(text).toBe('Hello');
    expect(error?.message).toMatch(/^OpenAI-compatible server sent a malformed stream/);
  });
});
