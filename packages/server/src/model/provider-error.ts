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
  /** How long the upstream asked to wait before a retry (its `Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { status?: number; retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
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

/** Below this length a key's base64 fragments are short enough to turn up in ordinary text. */
const MIN_ENCODED_KEY_LENGTH = 8;

/**
 * Removes the configured key, and anything shaped like one, from a message a vendor wrote. Proxies and gateways echo
 * the key in other forms too, all caught: in any letter case, percent-encoded (wholly or in part), and in base64 or
 * base64url, also inside a longer base64 text such as an echoed `Basic` credential.
 */
export function redactSecrets(text: string, apiKey: string | undefined): string {
  const withoutKey = apiKey ? text.replace(keyForms(apiKey), '[redacted]') : text;
  const redacted = withoutKey.replace(KEY_LIKE, '[redacted]').trim();
  return redacted.length > MAX_MESSAGE_LENGTH ? `${redacted.slice(0, MAX_MESSAGE_LENGTH)}…` : redacted;
}

function keyForms(apiKey: string): RegExp {
  const forms = [percentEncodable(apiKey)];
  if (apiKey.length >= MIN_ENCODED_KEY_LENGTH) forms.push(...base64Fragments(apiKey));
  return new RegExp(forms.join('|'), 'gi');
}

/** Each character of the key as itself or as the %XX escapes of its UTF-8 bytes. */
function percentEncodable(apiKey: string): string {
  return [...apiKey]
    .map((character) => {
      const escaped = [...Buffer.from(character, 'utf8')]
        .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
        .join('');
      return `(?:${escapeRegExp(character)}|${escaped})`;
    })
    .join('');
}

/**
 * The part of the key's base64 that does not depend on its neighbours, for each of the three alignments it can have
 * inside a longer encoded text; `+` and `/` also match base64url's `-` and `_`.
 */
function base64Fragments(apiKey: string): string[] {
  const key = Buffer.from(apiKey, 'utf8');
  return [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), key]).toString('base64');
    const stable = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + key.length)) / 6));
    return escapeRegExp(stable).replaceAll('\\+', '[+-]').replaceAll('/', '[/_]');
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The wait an error response asks for, in milliseconds: OpenAI's `retry-after-ms`, else `Retry-After` in seconds or
 * as an HTTP date. `header` reads one response header by its lower-case name.
 */
const DECIMAL = /^\d+(\.\d+)?$/;

export function retryAfterMs(
  header: (name: string) => string | null | undefined,
  now = Date.now(),
): number | undefined {
  const milliseconds = header('retry-after-ms')?.trim();
  if (milliseconds && DECIMAL.test(milliseconds)) return Number(milliseconds);
  const value = header('retry-after')?.trim();
  if (!value) return undefined;
  if (DECIMAL.test(value)) return Number(value) * 1000;
  // An HTTP date starts with the day's name; Date.parse would also take "-3" or "12" for a date.
  if (!/^[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface StatusFailure {
  status: number;
  /** What the error body said. */
  vendorMessage: string;
  /** Kept out of the message. */
  apiKey?: string;
  /** See `retryAfterMs`. */
  retryAfterMs?: number;
}

/** The upstream answered with an error status. */
export function statusFailure(
  vendor: string,
  { status, vendorMessage, apiKey, retryAfterMs }: StatusFailure,
): ProviderError {
  const detail = redactSecrets(vendorMessage, apiKey);
  return new ProviderError(`${vendor} answered HTTP ${status}${detail ? `: ${detail}` : ''}`, {
    status,
    retryable: isRetryableStatus(status),
    retryAfterMs,
  });
}

/** The vendor reported an error inside an otherwise successful stream. */
export function streamedFailure(
  vendor: string,
  vendorMessage: string,
  apiKey?: string,
  status?: number,
): ProviderError {
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

export function streamStalled(vendor: string, timeoutMs: number): ProviderError {
  return new ProviderError(`${vendor} sent nothing for ${timeoutMs} ms after the answer started: it was cut there`);
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
