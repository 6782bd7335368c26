import { afterEach, describe, expect, it } from 'vitest';
import { createModelProvider } from '../../src/model/provider-factory.js';
import { MAX_STREAM_FRAME_LENGTH } from '../../src/model/upstream/stream-limits.js';
import { API_KEY, drain, providerContract, streamOf } from './provider-contract.js';
import { endlessLine, fixture, ndjson, type ReplayServer, startReplayServer } from './replay-server.js';

const STREAM = fixture('ollama-chat-stream.ndjson');

providerContract({
  name: 'ollama',
  create: (baseUrl, config) => createModelProvider({ provider: 'ollama', baseUrl, ...config }),
  reply: (options) => ndjson(STREAM, options),
  framesToFirstText: 1,
  framesBeforeTerminator: 3,
  malformed: ndjson(fixture('ollama-malformed.ndjson')),
  errorBody: (message) => ({ error: message }),
  finish: { finishReason: 'stop', usage: { inputTokens: 26, outputTokens: 282 } },
  reasoning: ndjson(fixture('ollama-thinking-stream.ndjson')),
  reasoningFinish: { finishReason: 'stop', usage: { inputTokens: 11, outputTokens: 12 } },
});

describe('ollama: the request and vendor specifics', () => {
  let server: ReplayServer;
  afterEach(() => server.close());

  it('posts the branch after the system prompt to /api/chat, with sampling options', async () => {
    server = await startReplayServer(ndjson(STREAM));
    const provider = createModelProvider({
      provider: 'ollama',
      baseUrl: server.url,
      model: 'qwen3:8b',
      systemPrompt: 'Be brief.',
      temperature: 0.7,
      maxTokens: 128,
    });
    const messages = [
      { role: 'user' as const, content: 'Plan a trip' },
      { role: 'assistant' as const, content: 'Sure, where' },
      { role: 'user' as const, content: 'Japan' },
    ];
    await drain(streamOf(provider, messages));
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/api/chat' });
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toEqual({
      model: 'qwen3:8b',
      messages: [{ role: 'system', content: 'Be brief.' }, ...messages],
      stream: true,
      options: { temperature: 0.7, num_predict: 128 },
    });
    expect(provider).toMatchObject({ provider: 'ollama', model: 'qwen3:8b' });
  });

  it('sends no options when none are set, and a bearer token when a key is', async () => {
    server = await startReplayServer(ndjson(STREAM));
    await drain(streamOf(createModelProvider({ provider: 'ollama', baseUrl: server.url, apiKey: API_KEY })));
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(server.requests[0]?.body).toEqual({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
  });

  it('fails as a malformed stream when a line runs past the bound without ending, and ends the upstream request', {
    timeout: 10_000,
  }, async () => {
    const [hello] = STREAM.split('\n');
    server = await startReplayServer(endlessLine('application/x-ndjson', `${hello}\n`));
    const { text, error } = await drain(streamOf(createModelProvider({ provider: 'ollama', baseUrl: server.url })));
    expect(text).toBe('Hello');
    expect(error?.message).toBe(
      `Ollama sent a malformed stream: a line ran past ${MAX_STREAM_FRAME_LENGTH} characters without ending`,
    );
    await server.requests[0]?.closed;
  });

  it('fails with the message of an error line sent mid-stream', async () => {
    server = await startReplayServer(ndjson(fixture('ollama-error-mid-stream.ndjson')));
    const { text, error } = await drain(streamOf(createModelProvider({ provider: 'ollama', baseUrl: server.url })));
    expect(text).toBe('Hello');
    expect(error?.message).toBe(
      'Ollama reported an error: an error was encountered while running the model: unexpected EOF',
    );
  });
});
