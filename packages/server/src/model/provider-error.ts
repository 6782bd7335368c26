const marker = Symbol.for('@promethea/cpp-server.ProviderError');

/**
 * A model provider failed. `message` is safe to show to clients: it never contains an API key or request headers.
 */
export class ProviderError extends Error {
  readonly [marker] = true;
  override readonly name = 'ProviderError';
  /** The upstream HTTP status, when there was one. */
  readonly status: number | undefined;
  /** Whether retrying the request (before any text was streamed) may succeed: 429 and 5xx. */
  readonly retryable: boolean;

  constructor(message: string, options: { status?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable ?? false;
  }

  static isInstance(value: unknown): value is ProviderError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}

/**
 * The one place that decides which upstream failures are worth another try: rate limits (429) and server-side
 * failures (5xx, including Anthropic's 529 "overloaded"). Everything else (bad key, unknown model, bad request)
 * would fail the same way again.
 */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Vendor messages are shown to clients: keep them short enough for a CPP_ERROR and free of credentials. */
const MAX_MESSAGE_LENGTH = 500;

/**
 * OpenAI echoes a masked key (`sk-abc***xyz`) in its 401 message; even a fragment of a key stays out. The prefixes
 * are those of OpenAI and OpenRouter (`sk-`), Anthropic (`sk-ant-`), Groq (`gsk_`) and xAI (`xai-`).
 */
const KEY_LIKE = /\b(?:sk|gsk|xai)[-_][A-Za-z0-9_*.-]{8,}/g;

/** Removes the configured key, and anything shaped like one, from a message a vendor wrote. */
export function redactSecrets(text: string, apiKey: string | undefined): string {
  const withoutKey = apiKey ? text.split(apiKey).join('[redacted]') : text;
  const redacted = withoutKey.replace(KEY_LIKE, '[redacted]').trim();
  return redacted.length > MAX_MESSAGE_LENGTH ? `${redacted.slice(0, MAX_MESSAGE_LENGTH)}…` : redacted;
}

/** The upstream answered with an error status; `vendorMessage` is what its error body said. */
export function statusFailure(vendor: string, status: number, vendorMessage: string, apiKey?: string): ProviderError {
  const detail = redactSecrets(vendorMessage, apiKey);
  return new ProviderError(`${vendor} answered HTTP ${status}${detail ? `: ${detail}` : ''}`, {
    status,
    retryable: isRetryableStatus(status),
  });
}

/** The vendor reported an error inside an otherwise successful stream. */
export function streamedFailure(vendor: string, vendorMessage: string, apiKey?: string, status?: number): ProviderError {
  return new ProviderError(`${vendor} reported an error: ${redactSecrets(vendorMessage, apiKey)}`, {
    status,
    retryable: status !== undefined && isRetryableStatus(status),
  });
}

export function malformedStream(vendor: string, what: string, cause?: unknown): ProviderError {
  return new ProviderError(`${vendor} sent a malformed stream: ${what}`, { cause });
}

export function missingTerminator(vendor: string, terminator: string): ProviderError {
  return new ProviderError(`${vendor} ended the stream without ${terminator}: the answer may be incomplete`);
}

export function firstTokenTimeout(vendor: string, timeoutMs: number): ProviderError {
  return new ProviderError(`${vendor} sent no text within ${timeoutMs} ms`);
}

/** A network failure: refused, reset or cut mid-stream. Node's network errors name the address, never headers. */
export function connectionFailure(vendor: string, error: unknown): ProviderError {
  return new ProviderError(`Connection to ${vendor} failed: ${networkDetail(error)}`, { cause: error });
}

function networkDetail(error: unknown): string {
  // fetch throws `TypeError: fetch failed` or `terminated`; the useful part ("other side closed", "connect
  // ECONNREFUSED 127.0.0.1:11434") is its cause.
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (cause instanceof Error && cause.message) return cause.message;
  return readCode(cause) ?? (error instanceof Error ? error.message : 'unknown error');
}

function readCode(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !('code' in value)) return undefined;
  return typeof value.code === 'string' ? value.code : undefined;
}
