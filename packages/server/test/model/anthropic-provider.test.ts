import { afterEach, describe, expect, it } from 'vitest';
import { CONTINUE_INSTRUCTION } from '../../src/model/model-provider.js';
import { createModelProvider } from '../../src/model/provider-factory.js';
import { API_KEY, drain, providerContract, streamOf } from './provider-contract.js';
import { MAX_STREAM_FRAME_LENGTH } from '../../src/model/upstream/stream-limits.js';
import { endlessLine, fixture, type ReplayServer, sse, startReplayServer } from './replay-server.js';

const STREAM = fixture('anthropic-messages-stream.sse');

const anthropic = (baseUrl: string, retries = 0) =>
  createModelProvider({ provider: 'anthropic', baseUrl, apiKey: API_KEY, maxRetries: retries, retryBaseDelayMs: 1 });

providerContract({
  name: 'anthropic',
  create: (baseUrl, config) => createModelProvider({ provider: 'anthropic', baseUrl, ...config }),
  reply: (options) => sse(STREAM, options),
  // message_start, content_block_start and a ping come before "Hello".
  framesToFirstText: 4,
  framesBeforeTerminator: 7,
  malformed: sse(fixture('anthropic-malformed.sse')),
  errorBody: (message) => ({ type: 'error', error: { type: 'api_error', message } }),
  finish: { finishReason: 'stop', usage: { inputTokens: 25, outputTokens: 15 } },
  // Extended thinking: thinking_delta blocks, then a signature_delta that is not text.
  reasoning: sse(fixture('anthropic-thinking-stream.sse')),
  reasoningFinish: { finishReason: 'stop', usage: { inputTokens: 25, outputTokens: 40 } },
});

describe('anthropic: the request and vendor specifics', () => {
  let server: ReplayServer;
  afterEach(() => server.close());

  it('posts the system prompt in its own field, with the key and the API version', async () => {
    server = await startReplayServer(sse(STREAM));
    const provider = createModelProvider({
      provider: 'anthropic',
      baseUrl: server.url,
      apiKey: API_KEY,
      model: 'claude-haiku-4-5',
      systemPrompt: 'Be brief.',
      temperature: 0.5,
      maxTokens: 300,
    });
    await drain(streamOf(provider, [{ role: 'user', content: 'Hi' }]));
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/messages' });
    // The SDK (1.14) sends the key as a bearer token and pins the API version it was built for.
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'anthropic-version': expect.any(String),
    });
    expect(request?.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 300,
      system: 'Be brief.',
      temperature: 0.5,
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(provider).toMatchObject({ provider: 'anthropic', model: 'claude-haiku-4-5' });
  });

  it('sends strictly alternating turns that start with the user, and 4096 max tokens by default', async () => {
    server = await startReplayServer(sse(STREAM));
    await drain(
      streamOf(anthropic(server.url), [
        { role: 'assistant', content: 'Welcome back.' },
        { role: 'user', content: 'Plan a trip' },
        { role: 'assistant', content: '   ' },
        { role: 'user', content: 'to Japan' },
        { role: 'assistant', content: 'Sure, Japan in' },
        { role: 'user', content: 'Make it Korea' },
      ]),
    );
    expect(server.requests[0]?.body).toMatchObject({
      max_tokens: 4096,
      messages: [
        { role: 'user', content: '(The conversation so far follows.)' },
        { role: 'assistant', content: 'Welcome back.' },
        { role: 'user', content: 'Plan a trip\n\nto Japan' },
        { role: 'assistant', content: 'Sure, Japan in' },
        { role: 'user', content: 'Make it Korea' },
      ],
    });
  });

  const partial = [
    { role: 'user' as const, content: 'Plan a trip' },
    { role: 'assistant' as const, content: 'Day one: Kyoto. ' },
  ];

  it('continues a partial answer from an assistant prefill, without the trailing white space the API refuses', async () => {
    server = await startReplayServer(sse(STREAM));
    await drain(
      anthropic(server.url).stream({ messages: partial, continues: true, signal: new AbortController().signal }),
    );
    expect(server.requests[0]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'Plan a trip' },
        { role: 'assistant', content: 'Day one: Kyoto.' },
      ],
    });
  });

  it('switches on extended thinking when configured: the budget, max_tokens on top of it, no temperature; a continuation asked for, not prefilled', async () => {
    server = await startReplayServer(sse(fixture('anthropic-thinking-stream.sse')));
    const provider = createModelProvider({
      provider: 'anthropic',
      baseUrl: server.url,
      apiKey: API_KEY,
      maxTokens: 1000,
      temperature: 0.2,
      thinkingBudgetTokens: 2048,
    });
    const { parts } = await drain(
      provider.stream({ messages: partial, continues: true, signal: new AbortController().signal }),
    );
    expect(provider.reasoning).toBe(true);
    const body = server.requests[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_tokens: 3048, thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(body).not.toHaveProperty('temperature');
    expect(body.messages).toEqual([...partial, { role: 'user', content: CONTINUE_INSTRUCTION }]);
    expect(parts.some((part) => part.type === 'reasoning-delta')).toBe(true);
  });

  it('takes a thinking budget for Anthropic only', () => {
    expect(() => createModelProvider({ provider: 'openai-compatible', thinkingBudgetTokens: 2048 })).toThrow(
      /Only the anthropic provider/,
    );
  });

  it('fails as a malformed stream when a line runs past the bound without ending, and ends the upstream request', {
    timeout: 10_000,
  }, async () => {
    // message_start, content_block_start, ping and the "Hello" delta.
    const toHello = STREAM.split('\n\n').slice(0, 4).join('\n\n');
    server = await startReplayServer(endlessLine('text/event-stream', `${toHello}\n\n`));
    const { text, error } = await drain(streamOf(anthropic(server.url)));
    expect(text).toBe('Hello');
    expect(error?.message).toBe(
      `Anthropic sent a malformed stream: a line ran past ${MAX_STREAM_FRAME_LENGTH} bytes without ending`,
    );
    await server.requests[0]?.closed;
  });

  it('retries an overloaded error event that comes before any text', async () => {
    server = await startReplayServer(sse(fixture('anthropic-overloaded.sse')), sse(STREAM));
    const { text, error } = await drain(streamOf(anthropic(server.url, 1)));
    expect(error).toBeUndefined();
    expect(text).toBe('Hello there!');
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry an error event after the first token, and keeps the text', async () => {
    server = await startReplayServer(sse(fixture('anthropic-error-event.sse')), sse(STREAM));
    const { text, error } = await drain(streamOf(anthropic(server.url, 2)));
    expect(text).toBe('Hello');
    expect(error).toMatchObject({ message: 'Anthropic reported an error: Overloaded', status: 529, retryable: true });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses to start without an API key', () => {
    expect(() => createModelProvider({ provider: 'anthropic' })).toThrow('The anthropic provider needs an API key');
  });
});
