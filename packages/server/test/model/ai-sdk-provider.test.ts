import { getEventListeners } from 'node:events';
import { APICallError, createGateway } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { AiSdkProvider, boundedFetch } from '../../src/model/providers/ai-sdk-provider.js';
import { MAX_STREAM_FRAME_LENGTH } from '../../src/model/upstream/stream-limits.js';
import { API_KEY, drain, streamOf } from './provider-contract.js';
import { endlessLine, startReplayServer } from './replay-server.js';

type StreamResult = Awaited<ReturnType<MockLanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;

const USAGE = {
  inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

const TEXT: StreamPart[] = [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Hello' },
  { type: 'text-delta', id: 't1', delta: '' },
  { type: 'text-delta', id: 't1', delta: ' there!' },
  { type: 'text-end', id: 't1' },
];
const FINISH: StreamPart = { type: 'finish', finishReason: { unified: 'length', raw: 'max_tokens' }, usage: USAGE };

const streamOfParts = (parts: StreamPart[]): StreamResult => ({ stream: convertArrayToReadableStream(parts) });

const unavailable = (statusCode: number) =>
  new APICallError({
    message: `Upstream said ${statusCode}`,
    url: 'https://api.example/v1',
    requestBodyValues: {},
    statusCode,
  });

/** A model whose n-th call runs `calls[n]` (the last repeats). */
function mockModel(...calls: Array<() => StreamResult | Promise<StreamResult>>) {
  let count = 0;
  return new MockLanguageModelV3({
    provider: 'mock.chat',
    modelId: 'mock-1',
    doStream: async () => calls[Math.min(count++, calls.length - 1)]!(),
  });
}

const bridge = (model: MockLanguageModelV3, options: Partial<ConstructorParameters<typeof AiSdkProvider>[0]> = {}) =>
  new AiSdkProvider({ model, policy: { retryBaseDelayMs: 1 }, ...options });

describe('AiSdkProvider', () => {
  it('streams text and finish from any AI SDK model, with the branch, system prompt and settings', async () => {
    const model = mockModel(() => streamOfParts([...TEXT, FINISH]));
    const provider = bridge(model, { systemPrompt: 'Be brief.', temperature: 0.3, maxTokens: 64 });
    const { parts, error } = await drain(
      streamOf(provider, [
        { role: 'user', content: 'Plan a trip' },
        { role: 'assistant', content: 'Sure, where' },
        { role: 'user', content: 'Japan' },
      ]),
    );
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: ' there!' },
      { type: 'finish', finishReason: 'length', usage: { inputTokens: 12, outputTokens: 2 } },
    ]);
    expect(provider).toMatchObject({ provider: 'ai-sdk:mock.chat', model: 'mock-1' });
    const [call] = model.doStreamCalls;
    expect(call).toMatchObject({ temperature: 0.3, maxOutputTokens: 64 });
    expect(call?.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Plan a trip' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Sure, where' }] },
      { role: 'user', content: [{ type: 'text', text: 'Japan' }] },
    ]);
  });

  it('streams the reasoning of a reasoning model apart from its answer', async () => {
    const reasoning: StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'The user greets me.' },
      { type: 'reasoning-end', id: 'r1' },
    ];
    const { parts, error } = await drain(
      streamOf(bridge(mockModel(() => streamOfParts([...reasoning, ...TEXT.slice(1), FINISH])))),
    );
    expect(error).toBeUndefined();
    expect(parts.slice(0, 3)).toEqual([
      { type: 'reasoning-delta', text: 'The user greets me.' },
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: ' there!' },
    ]);
  });

  it('retries a 503 before the first token, once, through its own policy rather than the AI SDK', async () => {
    const model = mockModel(
      () => Promise.reject(unavailable(503)),
      () => streamOfParts([...TEXT, FINISH]),
    );
    const { text, error } = await drain(streamOf(bridge(model, { policy: { maxRetries: 1, retryBaseDelayMs: 1 } })));
    expect(error).toBeUndefined();
    expect(text).toBe('Hello there!');
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it('turns a 401 into a ProviderError with its status, without retrying', async () => {
    const model = mockModel(() => Promise.reject(unavailable(401)));
    const { error } = await drain(streamOf(bridge(model)));
    expect(error).toMatchObject({
      status: 401,
      retryable: false,
      message: 'AI SDK provider mock.chat answered HTTP 401: Upstream said 401',
    });
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('fails on an error part after the first token, keeping the text, without retrying', async () => {
    const model = mockModel(() => streamOfParts([...TEXT.slice(0, 3), { type: 'error', error: unavailable(503) }]));
    const { text, error } = await drain(streamOf(bridge(model)));
    expect(text).toBe('Hello');
    expect(error?.message).toBe('AI SDK provider mock.chat answered HTTP 503: Upstream said 503');
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it('aborts the model call when the signal aborts, and yields nothing more', async () => {
    const model = mockModel(() => ({
      stream: new ReadableStream<StreamPart>({
        start(controller) {
          for (const part of TEXT.slice(0, 3)) controller.enqueue(part);
        },
      }),
    }));
    const controller = new AbortController();
    const { parts, error } = await drain(
      (async function* () {
        for await (const part of streamOf(bridge(model), undefined, controller.signal)) {
          yield part;
          controller.abort();
        }
      })(),
    );
    expect(parts).toEqual([{ type: 'text-delta', text: 'Hello' }]);
    expect(error).toBeUndefined();
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
  });

  it('times out a model that sends no text', async () => {
    const model = mockModel(() => ({ stream: new ReadableStream<StreamPart>() }));
    const { error } = await drain(streamOf(bridge(model, { policy: { firstTokenTimeoutMs: 200 } })));
    expect(error?.message).toBe('AI SDK provider mock.chat sent no text within 200 ms');
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
  });

  it('leaves no listener on the caller signal after many generations', async () => {
    const model = mockModel(() => streamOfParts([...TEXT, FINISH]));
    const provider = bridge(model);
    const signal = new AbortController().signal;
    for (let generation = 0; generation < 50; generation += 1) await drain(streamOf(provider, undefined, signal));
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('fails as a malformed stream when a line runs past the bound, given boundedFetch, and ends the upstream request', {
    timeout: 10_000,
  }, async () => {
    // The AI Gateway provider ships with `ai`; its wire format is SSE whose events are the model's stream parts.
    const toHello = TEXT.slice(0, 3)
      .map((part) => `data: ${JSON.stringify(part)}\n\n`)
      .join('');
    const server = await startReplayServer(endlessLine('text/event-stream', toHello));
    try {
      const gateway = createGateway({ baseURL: server.url, apiKey: API_KEY, fetch: boundedFetch() });
      const { text, error } = await drain(streamOf(new AiSdkProvider({ model: gateway('openai/gpt-4o-mini') })));
      expect(text).toBe('Hello');
      expect(error?.message).toBe(
        `AI SDK provider gateway sent a malformed stream: a line ran past ${MAX_STREAM_FRAME_LENGTH} bytes without ending`,
      );
      await server.requests[0]?.closed;
    } finally {
      await server.close();
    }
  });
});
