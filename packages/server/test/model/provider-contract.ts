import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { getEventListeners, once } from 'node:events';
import { globalAgent } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ModelMessage, ModelProvider, ModelStreamPart } from '../../src/model/model-provider.js';
import type { ProviderConfig } from '../../src/model/provider-config.js';
import { ProviderError } from '../../src/model/provider-error.js';
import { type Reply, type ReplayServer, silence, startReplayServer, status } from './replay-server.js';

export const API_KEY = 'sk-test-0123456789abcdefghijklmnop';

/** An error body as large as the one that once took a server from 110 MB to 1.7 GB. */
const HUGE_BODY_BYTES = 300 * 1024 * 1024;

export interface Drained {
  parts: ModelStreamPart[];
  text: string;
  error?: ProviderError;
}

/** Runs a stream to its end, collecting its parts and the ProviderError it ended with, if any. */
export async function drain(stream: AsyncIterable<ModelStreamPart>): Promise<Drained> {
  const parts: ModelStreamPart[] = [];
  let error: ProviderError | undefined;
  try {
    for await (const part of stream) parts.push(part);
  } catch (thrown) {
    if (!ProviderError.isInstance(thrown)) throw thrown;
    error = thrown;
  }
  const text = parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');
  return { parts, text, ...(error ? { error } : {}) };
}

/**
 * Settles once the connection of the next request to `url` has read its response to the end and is free for
 * another request: back in Node's http agent (the providers on node:http), or done in fetch's pool (the vendor SDKs
 * on fetch), which takes it back on its next turn.
 */
async function connectionFreed(url: string): Promise<void> {
  const { origin, port } = new URL(url);
  await new Promise<void>((resolve) => {
    const freed = (): void => {
      globalAgent.off('free', onAgentFree);
      unsubscribe('undici:request:trailers', onFetchComplete);
      resolve();
    };
    const onAgentFree = (_socket: unknown, options: { port?: number | string | null }): void => {
      if (String(options.port) === port) freed();
    };
    const onFetchComplete = (message: unknown): void => {
      if (String((message as { request: { origin: unknown } }).request.origin) === origin) freed();
    };
    globalAgent.on('free', onAgentFree);
    subscribe('undici:request:trailers', onFetchComplete);
  });
  await nextTurn();
}

export function streamOf(
  provider: ModelProvider,
  messages: ModelMessage[] = [{ role: 'user', content: 'Hi' }],
  signal = new AbortController().signal,
) {
  return provider.stream({ messages, signal });
}

/** What a provider test tells the shared contract about its vendor's wire format. */
export interface ProviderUnderTest {
  name: string;
  /** The provider built by the factory against the replay server's URL. */
  create(baseUrl: string, config?: Partial<ProviderConfig>): ModelProvider;
  /** Replays the vendor's documented stream, which says "Hello" then " there!"; `frames` cuts it short. */
  reply(options?: { frames?: number; ending?: 'end' | 'reset' | 'hold' | 'at-once' }): Reply;
  /** Frames of that stream up to and including the one that carries "Hello". */
  framesToFirstText: number;
  /** Frames of that stream before its terminator. */
  framesBeforeTerminator: number;
  /** A stream that breaks the vendor's format after "Hello". */
  malformed: Reply;
  /** The vendor's JSON body for an error status. */
  errorBody(message: string): unknown;
  finish: { finishReason: FinishReason; usage: TokenUsage };
  /** Replays the vendor's documented reasoning stream: "The user greets me.", " Greet back.", then "Hello there!". */
  reasoning: Reply;
  /** How that stream finishes. */
  reasoningFinish: { finishReason: FinishReason; usage: TokenUsage };
}

/** The behaviour every HTTP provider owes the engine, run against each vendor's replayed wire format. */
export function providerContract(vendor: ProviderUnderTest): void {
  describe(`${vendor.name}: the provider contract`, () => {
    let server: ReplayServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    async function serve(...replies: Reply[]): Promise<ReplayServer> {
      server = await startReplayServer(...replies);
      return server;
    }

    const create = (url: string, config: Partial<ProviderConfig> = {}) =>
      vendor.create(url, { apiKey: API_KEY, retryBaseDelayMs: 1, ...config });

    it('streams the text deltas, skipping empty ones, then the finish reason and token usage', async () => {
      const { url } = await serve(vendor.reply());
      const { parts, error } = await drain(streamOf(create(url)));
      expect(error).toBeUndefined();
      expect(parts).toEqual([
        { type: 'text-delta', text: 'Hello' },
        { type: 'text-delta', text: ' there!' },
        { type: 'finish', ...vendor.finish },
      ]);
    });

    it("reads the model's reasoning apart from its answer", async () => {
      const { url } = await serve(vendor.reasoning);
      const { parts, error } = await drain(streamOf(create(url)));
      expect(error).toBeUndefined();
      expect(parts).toEqual([
        { type: 'reasoning-delta', text: 'The user greets me.' },
        { type: 'reasoning-delta', text: ' Greet back.' },
        { type: 'text-delta', text: 'Hello' },
        { type: 'text-delta', text: ' there!' },
        { type: 'finish', ...vendor.reasoningFinish },
      ]);
    });

    it.each([
      [401, 'Incorrect API key provided', false],
      [404, 'The model does not exist', false],
      [429, 'Rate limit reached', true],
      [500, 'The server had an error', true],
      [503, 'The engine is overloaded', true],
    ])('turns HTTP %i into a ProviderError with the vendor message and no key', async (code, message, retryable) => {
      const { url } = await serve(status(code, vendor.errorBody(`${message} (key ${API_KEY})`)));
      const { error } = await drain(streamOf(create(url, { maxRetries: 0 })));
      expect(error).toMatchObject({ status: code, retryable });
      expect(error?.message).toContain(`HTTP ${code}`);
      expect(error?.message).toContain(message);
      expect(error?.message).not.toContain(API_KEY);
    });

    it('fails on a malformed stream, after the text that came before', async () => {
      const { url } = await serve(vendor.malformed);
      const { text, error } = await drain(streamOf(create(url)));
      expect(text).toBe('Hello');
      expect(error?.message).toMatch(/malformed/);
    });

    it('fails when the connection is reset mid-stream, keeping the text that came before', async () => {
      const { url } = await serve(vendor.reply({ frames: vendor.framesToFirstText, ending: 'reset' }));
      const { text, error } = await drain(streamOf(create(url)));
      expect(text).toBe('Hello');
      expect(error?.message).toMatch(/^Connection to .* failed/);
    });

    it('fails when the stream ends without its terminator', async () => {
      const { url } = await serve(vendor.reply({ frames: vendor.framesBeforeTerminator }));
      const { text, parts, error } = await drain(streamOf(create(url)));
      expect(text).toBe('Hello there!');
      expect(parts.some((part) => part.type === 'finish')).toBe(false);
      expect(error?.message).toMatch(/without .*: the answer may be incomplete/);
    });

    it('fails when no text comes within the first-token timeout, and ends the request', async () => {
      const replay = await serve(vendor.reply({ frames: vendor.framesToFirstText - 1, ending: 'hold' }));
      const { parts, error } = await drain(streamOf(create(replay.url, { firstTokenTimeoutMs: 300 })));
      expect(parts).toEqual([]);
      expect(error?.message).toMatch(/sent no text within 300 ms/);
      await replay.requests[0]?.closed;
    });

    it('times out a server that never answers at all', async () => {
      const replay = await serve(silence);
      const { error } = await drain(streamOf(create(replay.url, { firstTokenTimeoutMs: 300 })));
      expect(error?.message).toMatch(/sent no text within 300 ms/);
      await replay.requests[0]?.closed;
    });

    it('fails with a connection error when nothing listens', async () => {
      const replay = await serve(silence);
      await replay.close();
      server = undefined;
      const { error } = await drain(streamOf(create(replay.url)));
      expect(error?.message).toMatch(/^Connection to .* failed: .*ECONNREFUSED/);
    });

    it('ends the upstream request at once when the signal aborts, and yields nothing more', async () => {
      const replay = await serve(vendor.reply({ frames: vendor.framesToFirstText, ending: 'hold' }));
      const controller = new AbortController();
      const { parts, error } = await drain(
        (async function* () {
          for await (const part of streamOf(create(replay.url), undefined, controller.signal)) {
            yield part;
            controller.abort();
          }
        })(),
      );
      expect(parts).toEqual([{ type: 'text-delta', text: 'Hello' }]);
      expect(error).toBeUndefined();
      await replay.requests[0]?.closed;
    });

    it('yields nothing more once the signal aborts, even with the rest of the answer already in', async () => {
      const replay = await serve(vendor.reply({ ending: 'at-once' }));
      const provider = create(replay.url);
      const controller = new AbortController();
      const parts: ModelStreamPart[] = [];
      for await (const part of streamOf(provider, undefined, controller.signal)) {
        parts.push(part);
        controller.abort();
      }
      expect(parts).toEqual([{ type: 'text-delta', text: 'Hello' }]);
      // The connection it used is still sound: the next generation streams in full.
      const next = await drain(streamOf(provider));
      expect(next.error).toBeUndefined();
      expect(next.text).toBe('Hello there!');
    });

    it('reuses one connection for consecutive generations', async () => {
      // The first answer arrives whole; the others frame by frame, the end of the response after the terminator.
      const replay = await serve(vendor.reply({ ending: 'at-once' }), vendor.reply());
      const provider = create(replay.url);
      for (let generation = 0; generation < 4; generation += 1) {
        const freed = connectionFreed(replay.url);
        const { error } = await drain(streamOf(provider));
        expect(error).toBeUndefined();
        // A person's next prompt comes long after the end of the previous answer's response has arrived.
        await freed;
      }
      expect(replay.connections).toBe(1);
    });

    it('completes at the terminator of a response held open, and cuts that response soon after', async () => {
      const replay = await serve(vendor.reply({ ending: 'hold' }));
      const { text, error } = await drain(streamOf(create(replay.url)));
      expect(error).toBeUndefined();
      expect(text).toBe('Hello there!');
      await replay.requests[0]?.closed;
    });

    it('closes the upstream request when the consumer stops iterating early', async () => {
      const replay = await serve(vendor.reply({ frames: vendor.framesToFirstText, ending: 'hold' }));
      for await (const part of streamOf(create(replay.url))) {
        expect(part).toEqual({ type: 'text-delta', text: 'Hello' });
        break;
      }
      await replay.requests[0]?.closed;
    });

    it('retries a 503 that comes before the first token, then streams', async () => {
      const replay = await serve(status(503, vendor.errorBody('busy')), vendor.reply());
      const { text, error } = await drain(streamOf(create(replay.url, { maxRetries: 1 })));
      expect(error).toBeUndefined();
      expect(text).toBe('Hello there!');
      expect(replay.requests).toHaveLength(2);
    });

    it('gives up after maxRetries retries of a 429', async () => {
      const replay = await serve(status(429, vendor.errorBody('slow down')));
      const { error } = await drain(streamOf(create(replay.url, { maxRetries: 2 })));
      expect(error).toMatchObject({ status: 429 });
      expect(replay.requests).toHaveLength(3);
    });

    it('does not retry a 401', async () => {
      const replay = await serve(status(401, vendor.errorBody('bad key')), vendor.reply());
      const { error } = await drain(streamOf(create(replay.url, { maxRetries: 2 })));
      expect(error).toMatchObject({ status: 401 });
      expect(replay.requests).toHaveLength(1);
    });

    it('cuts a stream that stalls after its first token, keeping the text that came before', async () => {
      const replay = await serve(vendor.reply({ frames: vendor.framesToFirstText, ending: 'hold' }));
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const parts = streamOf(create(replay.url, { stallTimeoutMs: 5_000 }))[Symbol.asyncIterator]();
        expect((await parts.next()).value).toEqual({ type: 'text-delta', text: 'Hello' });
        const next = parts.next();
        const failure = expect(next).rejects.toThrow(`sent nothing for 5000 ms after the answer started`);
        await vi.advanceTimersByTimeAsync(5_000);
        await failure;
      } finally {
        vi.useRealTimers();
      }
      await replay.requests[0]?.closed;
    });

    it('reads how long a 429 asks to wait before a retry', async () => {
      const { url } = await serve(status(429, vendor.errorBody('slow down'), { 'retry-after': '7' }));
      const { error } = await drain(streamOf(create(url, { maxRetries: 0 })));
      expect(error).toMatchObject({ status: 429, retryAfterMs: 7000 });
    });

    it('reads only the start of a huge error body, and cuts the rest of it', async () => {
      let written = 0;
      const replay = await serve(async (response, closed) => {
        let open = true;
        void closed.then(() => (open = false));
        response.writeHead(500, { 'content-type': 'application/json' });
        const piece = Buffer.alloc(64 * 1024, 'x');
        while (open && written < HUGE_BODY_BYTES) {
          written += piece.length;
          if (!response.write(piece)) await Promise.race([once(response, 'drain'), closed]);
        }
        response.end();
      });
      const heapBefore = process.memoryUsage().heapUsed;
      const { error } = await drain(streamOf(create(replay.url, { maxRetries: 0 })));
      const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
      expect(error).toMatchObject({ status: 500 });
      expect(error?.message.length).toBeLessThan(600);
      await replay.requests[0]?.closed;
      // What the upstream could write before it was cut: the bytes read plus what the sockets' buffers hold.
      expect(written).toBeLessThan(HUGE_BODY_BYTES / 10);
      expect(heapGrowth).toBeLessThan(HUGE_BODY_BYTES / 10);
    });

    it('keeps every form of the key out of an error that echoes it', async () => {
      const echoes = [
        API_KEY.toUpperCase(),
        encodeURIComponent(API_KEY),
        Buffer.from(API_KEY).toString('base64'),
        Buffer.from(`user:${API_KEY}`).toString('base64url'),
      ];
      const { url } = await serve(status(401, vendor.errorBody(`refused ${echoes.join(' ')}`)));
      const { error } = await drain(streamOf(create(url, { maxRetries: 0 })));
      expect(error?.message).toContain('refused');
      // Base64 keeps the few characters that also encode its neighbours (`user:`, padding): never a piece of the key.
      expect(error?.message).toMatch(
        /refused \[redacted\] \[redacted\] \[redacted\][\w+/=]{0,3} [\w-]{0,9}\[redacted\][\w-]{0,3}$/,
      );
    });

    it('leaves no listener on the caller signal after many generations', async () => {
      const replay = await serve(vendor.reply());
      const provider = create(replay.url);
      const signal = new AbortController().signal;
      for (let generation = 0; generation < 25; generation += 1) {
        const { error } = await drain(streamOf(provider, undefined, signal));
        expect(error).toBeUndefined();
      }
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    });
  });
}
