import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { newThreadId } from '@promethea/cpp-protocol';
import {
  CONNECT_LIMIT_MS,
  DELTA_KEY,
  firstDueTime,
  waitUntil,
  type ChunkListener,
  type LoadStream,
} from './load-target.js';
import type { SseChatRequest } from './peer-protocols.js';

const EVENT_END = Buffer.from('\n\n');
const DELTA_KEY_BYTES = Buffer.from(DELTA_KEY);
/** Keep-alive connections, as a browser keeps them, and as many at once as there are answers. */
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/**
 * One answer over Server-Sent Events: a POST whose response streams the answer's chunks, read as lean as CPP's
 * frames (events are split on their blank line, a chunk's tokens read from its bytes; an event split across reads
 * waits for the rest). Closing it aborts the request, as `useChat`'s stop does: the connection closes.
 */
export class SseLoadStream implements LoadStream {
  /** The time the first chunk's bytes were read (`performance.now()`), once they were. */
  firstChunkAt: number | undefined;
  private request: ClientRequest | undefined;
  private partial: Buffer | undefined;
  private firstChunk: { resolve(due: number): void; reject(error: Error): void } | undefined;

  constructor(
    private readonly url: string,
    private readonly onChunk: ChunkListener,
  ) {}

  /** Posts `chat` (by default a new conversation of one prompt) once `startAt` has come. */
  async start(
    startAt: number,
    chat: SseChatRequest = { id: newThreadId(), messages: [{ role: 'user', content: 'tell me a long story' }] },
  ): Promise<number> {
    await waitUntil(startAt);
    const body = JSON.stringify(chat);
    const first = new Promise<number>((resolve, reject) => (this.firstChunk = { resolve, reject }));
    const outgoing = request(this.url, {
      method: 'POST',
      agent,
      timeout: CONNECT_LIMIT_MS,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    });
    this.request = outgoing;
    outgoing.once('response', (response: IncomingMessage) => {
      // Only the wait for the first bytes is limited; an answer streams for as long as it lasts.
      outgoing.setTimeout(0);
      if (response.statusCode !== 200) return this.fail(new Error(`the server answered HTTP ${response.statusCode}`));
      response.on('data', (data: Buffer) => this.receive(data));
      // An answer aborted by its client ends in an error of its response: expected, and the end of its stream.
      response.on('error', (error) => this.fail(error));
      response.once('close', () => this.fail(new Error('the response ended')));
    });
    outgoing.once('timeout', () => outgoing.destroy(new Error(`no response within ${CONNECT_LIMIT_MS / 1000} s`)));
    outgoing.once('error', (error) => this.fail(error));
    outgoing.end(body);
    return first;
  }

  close(): void {
    this.request?.destroy();
  }

  private receive(data: Buffer): void {
    const bytes = this.partial ? Buffer.concat([this.partial, data]) : data;
    this.partial = undefined;
    let from = 0;
    for (let end = bytes.indexOf(EVENT_END, from); end >= 0; end = bytes.indexOf(EVENT_END, from)) {
      const delta = bytes.indexOf(DELTA_KEY_BYTES, from);
      if (delta >= 0 && delta < end) this.chunk(bytes, delta + DELTA_KEY_BYTES.length);
      from = end + EVENT_END.length;
    }
    if (from < bytes.length) this.partial = bytes.subarray(from);
  }

  private chunk(bytes: Buffer, deltaFrom: number): void {
    this.onChunk(bytes, deltaFrom);
    if (this.firstChunk === undefined) return;
    this.firstChunkAt = performance.now();
    const awaited = this.firstChunk;
    this.firstChunk = undefined;
    awaited.resolve(firstDueTime(bytes, deltaFrom));
  }

  private fail(error: Error): void {
    const awaited = this.firstChunk;
    this.firstChunk = undefined;
    awaited?.reject(error);
  }
}
