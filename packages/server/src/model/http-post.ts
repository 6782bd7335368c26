import { connectionFailure, statusFailure } from './upstream-failures.js';
import { vendorErrorMessage } from './vendor-error-message.js';

export interface JsonPost {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal;
  /** Names the upstream in error messages. */
  vendor: string;
  /** Kept out of every error message. */
  apiKey?: string;
}

/**
 * POSTs JSON and returns the streaming response body. An error status becomes a ProviderError carrying the vendor's
 * own message; a refused connection becomes a connection failure; an abort propagates as is.
 */
export async function postJson(request: JsonPost): Promise<ReadableStream<Uint8Array>> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers },
      body: JSON.stringify(request.body),
      signal: request.signal,
    });
  } catch (error) {
    if (request.signal.aborted) throw error;
    throw connectionFailure(request.vendor, error);
  }
  if (!response.ok) {
    const body = await response.text().catch(() => '');
    throw statusFailure(request.vendor, response.status, vendorErrorMessage(body) || response.statusText, request.apiKey);
  }
  if (!response.body) throw connectionFailure(request.vendor, new Error('empty response body'));
  return response.body;
}
