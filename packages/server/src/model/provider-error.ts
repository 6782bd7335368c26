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
