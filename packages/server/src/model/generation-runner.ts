import type { ModelStreamPart } from './model-provider.js';
import { connectionFailure, firstTokenTimeout, ProviderError, streamStalled } from './provider-error.js';

/** How one generation waits for and retries its upstream. */
export interface GenerationPolicy {
  /** Fail an attempt that produced neither text nor a finish within this many milliseconds. */
  firstTokenTimeoutMs: number;
  /** Cut a stream that, once started, sends nothing more for this many milliseconds; the partial answer is kept. */
  stallTimeoutMs: number;
  /** Further attempts after a retryable failure (429, 5xx) that came before anything was streamed. */
  maxRetries: number;
  /** The first backoff delay in milliseconds; doubled before each further attempt. */
  retryBaseDelayMs: number;
}

/** For a hosted API: a minute to start answering, a minute of silence mid-answer, two retries after 0.5 s and 1 s. */
export const DEFAULT_GENERATION_POLICY: GenerationPolicy = {
  firstTokenTimeoutMs: 60_000,
  stallTimeoutMs: 60_000,
  maxRetries: 2,
  retryBaseDelayMs: 500,
};

/**
 * The longest wait before a retry. A `Retry-After` asking for more gives up at once: a person is waiting for the
 * answer, and an error they can act on beats a spinner.
 */
export const MAX_RETRY_DELAY_MS = 30_000;

/** Opens one attempt at the upstream stream; aborting `signal` must end its HTTP request. */
export type OpenAttempt = (signal: AbortSignal) => AsyncIterable<ModelStreamPart>;

export interface GenerationOptions {
  /** Names the upstream in error messages, e.g. `Anthropic`. */
  vendor: string;
  policy: GenerationPolicy;
  open: OpenAttempt;
  /** Turns a vendor-specific error into a ProviderError; unknown errors are treated as network failures. */
  describeFailure?: (error: unknown) => ProviderError | undefined;
}

type AttemptOutcome = { kind: 'done' } | { kind: 'failed'; failure: ProviderError; delivered: boolean };

/**
 * Runs one generation for a provider: one AbortController that the caller's signal aborts (its listener removed at
 * the end, so a long-lived signal gathers none), a first-token timeout, a stall timeout once the stream has started,
 * and retries for retryable failures before anything was streamed, after the upstream's `Retry-After` or else an
 * exponential backoff. A cancelled generation ends quietly, without yielding more.
 */
export async function* runGeneration(
  callerSignal: AbortSignal,
  options: GenerationOptions,
): AsyncGenerator<ModelStreamPart> {
  if (callerSignal.aborted) return;
  const controller = new AbortController();
  const abort = (): void => controller.abort(callerSignal.reason);
  callerSignal.addEventListener('abort', abort, { once: true });
  let finished = false;
  try {
    for (let attempt = 0; ; attempt += 1) {
      const outcome = yield* runAttempt(controller, options);
      if (outcome.kind === 'done') {
        finished = true;
        return;
      }
      if (callerSignal.aborted) return;
      const { failure, delivered } = outcome;
      if (delivered || !failure.retryable || attempt >= options.policy.maxRetries) throw failure;
      const delayMs = failure.retryAfterMs ?? retryDelayMs(attempt, options.policy.retryBaseDelayMs);
      if (delayMs > MAX_RETRY_DELAY_MS) throw failure;
      if (!(await pause(delayMs, controller.signal))) return;
    }
  } finally {
    callerSignal.removeEventListener('abort', abort);
    // Ends the upstream request when the consumer stopped iterating early or the attempt failed. After a complete
    // answer the request is left alone: what remains of its response may be read so its connection is kept.
    if (!finished) controller.abort();
  }
}

async function* runAttempt(
  controller: AbortController,
  options: GenerationOptions,
): AsyncGenerator<ModelStreamPart, AttemptOutcome> {
  const { vendor, policy } = options;
  let timedOut: (() => ProviderError) | undefined;
  const expire = (failure: () => ProviderError) => (): void => {
    timedOut = failure;
    controller.abort();
  };
  let timer = setTimeout(
    expire(() => firstTokenTimeout(vendor, policy.firstTokenTimeoutMs)),
    policy.firstTokenTimeoutMs,
  );
  let delivered = false;
  try {
    for await (const part of options.open(controller.signal)) {
      // Parts already read when the signal aborted (several events of one chunk) are not delivered.
      if (controller.signal.aborted) break;
      if (!delivered) {
        clearTimeout(timer);
        timer = setTimeout(
          expire(() => streamStalled(vendor, policy.stallTimeoutMs)),
          policy.stallTimeoutMs,
        );
        delivered = true;
      }
      yield part;
      // Measured from when the next part is wanted: one timer, re-armed per part, since parts come by the hundred.
      timer.refresh();
    }
    // An SDK may end quietly when its request is aborted; a timeout must still surface as a failure.
    if (!timedOut) return { kind: 'done' };
    return { kind: 'failed', failure: timedOut(), delivered };
  } catch (error) {
    return { kind: 'failed', failure: timedOut ? timedOut() : describe(error, options), delivered };
  } finally {
    clearTimeout(timer);
  }
}

function describe(error: unknown, options: GenerationOptions): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  return options.describeFailure?.(error) ?? connectionFailure(options.vendor, error);
}

/** Waits before the next attempt; false when the generation was cancelled meanwhile. */
function pause(delayMs: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const cancel = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', cancel);
      resolve(true);
    }, delayMs);
    signal.addEventListener('abort', cancel, { once: true });
  });
}

/** Exponential backoff: the base delay, doubled after each failed attempt, never more than MAX_RETRY_DELAY_MS. */
function retryDelayMs(attempt: number, baseDelayMs: number): number {
  return Math.min(baseDelayMs * 2 ** attempt, MAX_RETRY_DELAY_MS);
}
