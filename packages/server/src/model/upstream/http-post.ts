import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connectionFailure, retryAfterMs, statusFailure } from '../provider-error.js';
import { DRAIN_LIMIT_MS, MAX_ERROR_BODY_BYTES } from './stream-limits.js';

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
 * POSTs JSON and returns the streaming response body as text. An error status becomes a ProviderError carrying the vendor's
 * own message; a refused connection becomes a connection failure; an abort propagates as is.
 *
 * On node:http rather than fetch: fetch's Request, Headers and web-stream body cost about 0.2 ms before the first
 * byte of an answer can be read, most of what a gateway may add to the time to first token. Node's global agents
 * keep connections alive (closing them before the server's Keep-Alive timeout), so generations reuse them.
 */
export async function postJson(request: JsonPost): Promise<AsyncIterable<string>> {
  let response: IncomingMessage;
  try {
    response = await send(request);
  } catch (error) {
    if (request.signal.aborted) throw error;
    throw connectionFailure(request.vendor, error);
  }
  const status = response.statusCode ?? 0;
  if (status < 200 || status > 299) {
    const body = await errorBodyOf(response).catch(() => '');
    throw statusFailure(request.vendor, {
      status,
      vendorMessage: vendorErrorMessage(body) || (response.statusMessage ?? ''),
      apiKey: request.apiKey,
      retryAfterMs: retryAfterMs((name) => headerValue(response.headers[name])),
    });
  }
  return textOf(response, request.signal);
}

/** Sends the request; aborting `signal` before the response arrives cuts it. */
function send({ url, headers, body, signal }: JsonPost): Promise<IncomingMessage> {
  signal.throwIfAborted();
  const payload = JSON.stringify(body);
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
    });
    const abort = (): void => void outgoing.destroy(signal.reason as Error);
    const settle = (): void => signal.removeEventListener('abort', abort);
    signal.addEventListener('abort', abort, { once: true });
    // Kept for the request's life: a request cut after its response arrived reports its error here too.
    outgoing.on('error', (error) => {
      settle();
      reject(error);
    });
    outgoing.once('response', (response: IncomingMessage) => {
      // From here the response is cut instead (see chunksOf): destroying a request whose response has fully arrived
      // but is not yet read to its end races Node's return of the socket to the agent, and the socket's error is
      // then emitted with no listener, which would end the process.
      settle();
      resolve(response);
    });
    outgoing.end(payload);
  });
}

/**
 * The body's text as it arrives, decoded as UTF-8 by the response itself (a character split between two chunks is
 * held back until its end arrives); aborting `signal` cuts the response. A reader that stops early (at the
 * stream's terminator, say) leaves the response to be drained, so that its connection goes back to the agent for
 * the next generation, unless the signal aborts meanwhile (the consumer stopped before the answer's end) or it does
 * not end in time.
 */
async function* textOf(response: IncomingMessage, signal: AbortSignal): AsyncGenerator<string> {
  const cut = (): void => void response.destroy(signal.reason as Error);
  signal.addEventListener('abort', cut, { once: true });
  response.setEncoding('utf8');
  let ended = false;
  try {
    for await (const text of response.iterator({ destroyOnReturn: false })) yield text as string;
    ended = true;
  } finally {
    signal.removeEventListener('abort', cut);
    if (!ended) drain(response, signal);
  }
}

function drain(response: IncomingMessage, signal: AbortSignal): void {
  // Without an error: a destroyed response then emits none that nobody would listen to.
  const cut = (): void => void response.destroy();
  if (signal.aborted) return cut();
  const timer = setTimeout(cut, DRAIN_LIMIT_MS);
  signal.addEventListener('abort', cut, { once: true });
  response.once('close', () => {
    clearTimeout(timer);
    signal.removeEventListener('abort', cut);
  });
  response.resume();
}

/**
 * The start of an error response's body, at most MAX_ERROR_BODY_BYTES; the rest is not read but cut, with its
 * connection. A vendor's error message is short, and a body is the upstream's to make as large as it likes.
 */
async function errorBodyOf(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of response.iterator({ destroyOnReturn: true })) {
    const bytes = chunk as Buffer;
    chunks.push(bytes.subarray(0, MAX_ERROR_BODY_BYTES - length));
    length += bytes.length;
    if (length >= MAX_ERROR_BODY_BYTES) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The human-readable message of an error body, in the shapes the supported vendors use: OpenAI and Anthropic
 * `{"error": {"message": "..."}}`, Ollama `{"error": "..."}`, some proxies `{"message": "..."}`; otherwise the body
 * text itself.
 */
export function vendorErrorMessage(body: string): string {
  try {
    return messageOf(JSON.parse(body)) ?? body;
  } catch {
    return body;
  }
}

function messageOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.error === 'string') return record.error;
  if (typeof record.message === 'string') return record.message;
  return messageOf(record.error);
}
