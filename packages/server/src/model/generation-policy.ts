/** How one generation waits for and retries its upstream. */
export interface GenerationPolicy {
  /** Fail an attempt that produced neither text nor a finish within this many milliseconds. */
  firstTokenTimeoutMs: number;
  /** Further attempts after a retryable failure (429, 5xx) that came before anything was streamed. */
  maxRetries: number;
  /** The first backoff delay in milliseconds; doubled before each further attempt. */
  retryBaseDelayMs: number;
}

/** For a hosted API: a minute to start answering, two retries after 0.5 s and 1 s. */
export const DEFAULT_GENERATION_POLICY: GenerationPolicy = { firstTokenTimeoutMs: 60_000, maxRetries: 2, retryBaseDelayMs: 500 };
