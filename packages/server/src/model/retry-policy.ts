/**
 * The one place that decides which upstream failures are worth another try: rate limits (429) and server-side
 * failures (5xx, including Anthropic's 529 "overloaded"). Everything else (bad key, unknown model, bad request)
 * would fail the same way again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Exponential backoff: the base delay, doubled after each failed attempt, never more than 30 s. */
export function retryDelayMs(attempt: number, baseDelayMs: number): number {
  return Math.min(baseDelayMs * 2 ** attempt, 30_000);
}
