import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type GenerationPolicy,
  MAX_RETRY_DELAY_MS,
  runGeneration,
  type OpenAttempt,
} from '../../src/model/generation-runner.js';
import type { ModelStreamPart } from '../../src/model/model-provider.js';
import { ProviderError } from '../../src/model/provider-error.js';
import { drain } from './provider-contract.js';

const POLICY: GenerationPolicy = {
  firstTokenTimeoutMs: 10_000,
  stallTimeoutMs: 10_000,
  maxRetries: 3,
  retryBaseDelayMs: 1,
};
const overloaded = () => new ProviderError('overloaded', { status: 503, retryable: true });

/** An upstream that plays one script per attempt and counts the attempts. */
function scriptedUpstream(...scripts: Array<(signal: AbortSignal) => AsyncGenerator<ModelStreamPart>>) {
  const upstream = {
    attempts: 0,
    open: ((signal) => scripts[Math.min(upstream.attempts++, scripts.length - 1)]!(signal)) as OpenAttempt,
  };
  return upstream;
}

/** A script whose upstream fails before its first part, as one that refuses the request does. */
function refusing(fail: () => Error) {
  return async function* (): AsyncGenerator<ModelStreamPart> {
    yield* [];
    throw fail();
  };
}

async function* answer(): AsyncGenerator<ModelStreamPart> {
  yield { type: 'text-delta', text: 'Hello' };
  yield { type: 'finish', finishReason: 'stop' };
}

const generate = (open: OpenAttempt, signal = new AbortController().signal, policy = POLICY) =>
  runGeneration(signal, { vendor: 'Test vendor', policy, open });

describe('runGeneration', () => {
  it('retries a retryable failure that comes before anything was streamed', async () => {
    const upstream = scriptedUpstream(refusing(overloaded), answer);
    const { text, error } = await drain(generate(upstream.open));
    expect(error).toBeUndefined();
    expect(text).toBe('Hello');
    expect(upstream.attempts).toBe(2);
  });

  it('does not retry a retryable failure that comes after the first token', async () => {
    const upstream = scriptedUpstream(async function* () {
      yield { type: 'text-delta', text: 'Hel' };
      throw overloaded();
    }, answer);
    const { text, error } = await drain(generate(upstream.open));
    expect(text).toBe('Hel');
    expect(error?.message).toBe('overloaded');
    expect(upstream.attempts).toBe(1);
  });

  it('turns an unknown error into a connection failure', async () => {
    const upstream = scriptedUpstream(
      refusing(() => new TypeError('terminated', { cause: new Error('other side closed') })),
    );
    const { error } = await drain(generate(upstream.open));
    expect(error).toMatchObject({ message: 'Connection to Test vendor failed: other side closed', retryable: false });
  });

  it('stops quietly when cancelled during the backoff, without another attempt', async () => {
    const controller = new AbortController();
    const upstream = scriptedUpstream(
      refusing(() => {
        controller.abort();
        return overloaded();
      }),
      answer,
    );
    const { parts, error } = await drain(
      generate(upstream.open, controller.signal, { ...POLICY, retryBaseDelayMs: 60_000 }),
    );
    expect(parts).toEqual([]);
    expect(error).toBeUndefined();
    expect(upstream.attempts).toBe(1);
  });

  it('does not start when the signal is already aborted', async () => {
    const upstream = scriptedUpstream(answer);
    const controller = new AbortController();
    controller.abort();
    const { parts } = await drain(generate(upstream.open, controller.signal));
    expect(parts).toEqual([]);
    expect(upstream.attempts).toBe(0);
  });

  it('aborts the attempt signal when the consumer stops early', async () => {
    let attemptSignal: AbortSignal | undefined;
    const upstream = scriptedUpstream(async function* (signal) {
      attemptSignal = signal;
      yield* answer();
    });
    for await (const part of generate(upstream.open)) {
      expect(part.type).toBe('text-delta');
      break;
    }
    expect(attemptSignal?.aborted).toBe(true);
  });

  it('leaves the attempt signal alone after a complete answer, so its connection may be kept', async () => {
    let attemptSignal: AbortSignal | undefined;
    const upstream = scriptedUpstream(async function* (signal) {
      attemptSignal = signal;
      yield* answer();
    });
    await drain(generate(upstream.open));
    expect(attemptSignal?.aborted).toBe(false);
  });

  it('delivers nothing the attempt yields after the caller aborted', async () => {
    const controller = new AbortController();
    // An upstream that has the whole answer in hand and does not watch the signal itself.
    const upstream = scriptedUpstream(async function* () {
      yield { type: 'text-delta', text: 'Hello' };
      yield { type: 'text-delta', text: ' there' };
      yield { type: 'finish', finishReason: 'stop' };
    });
    const parts: ModelStreamPart[] = [];
    for await (const part of generate(upstream.open, controller.signal)) {
      parts.push(part);
      controller.abort();
    }
    expect(parts).toEqual([{ type: 'text-delta', text: 'Hello' }]);
  });

  it('leaves no listener on a caller signal shared by thousands of generations', async () => {
    const signal = new AbortController().signal;
    const upstream = scriptedUpstream(answer);
    for (let generation = 0; generation < 5000; generation += 1) await drain(generate(upstream.open, signal));
    expect(upstream.attempts).toBe(5000);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});

describe('runGeneration: waits asked for by the upstream', () => {
  afterEach(() => vi.useRealTimers());
  const rateLimited = (retryAfterMs: number) =>
    refusing(() => new ProviderError('slow down', { status: 429, retryable: true, retryAfterMs }));

  it('waits the Retry-After of a failure before the next attempt, instead of its own backoff', async () => {
    vi.useFakeTimers();
    const upstream = scriptedUpstream(rateLimited(7_000), answer);
    const result = drain(generate(upstream.open));
    await vi.advanceTimersByTimeAsync(6_999);
    expect(upstream.attempts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toMatchObject({ text: 'Hello' });
    expect(upstream.attempts).toBe(2);
  });

  it('gives up at once when the Retry-After is longer than the longest wait', async () => {
    const upstream = scriptedUpstream(rateLimited(MAX_RETRY_DELAY_MS + 1), answer);
    const { error } = await drain(generate(upstream.open));
    expect(error).toMatchObject({ status: 429, message: 'slow down' });
    expect(upstream.attempts).toBe(1);
  });

  it('cuts a stream that sends nothing for the stall timeout after its first part, keeping what came', async () => {
    vi.useFakeTimers();
    const upstream = scriptedUpstream(async function* (signal) {
      yield { type: 'text-delta', text: 'Hel' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    const result = drain(generate(upstream.open, undefined, { ...POLICY, stallTimeoutMs: 2_000 }));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await result).toMatchObject({
      text: 'Hel',
      error: { message: 'Test vendor sent nothing for 2000 ms after the answer started: it was cut there' },
    });
  });

  it('restarts the stall timeout with every part', async () => {
    vi.useFakeTimers();
    const upstream = scriptedUpstream(async function* () {
      for (const text of ['a', 'b', 'c']) {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        yield { type: 'text-delta', text };
      }
      yield { type: 'finish', finishReason: 'stop' };
    });
    const result = drain(
      generate(upstream.open, undefined, { ...POLICY, firstTokenTimeoutMs: 2_000, stallTimeoutMs: 2_000 }),
    );
    await vi.advanceTimersByTimeAsync(4_500);
    expect(await result).toMatchObject({ text: 'abc' });
    expect((await result).error).toBeUndefined();
  });
});
