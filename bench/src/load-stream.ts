import { CPP_SUBPROTOCOL, newMessageId, newThreadId } from '@promethea/cpp-protocol';
import WebSocket from 'ws';
import { clientFrame } from './cpp-frames.js';
import {
  CONNECT_LIMIT_MS,
  DELTA_KEY,
  firstDueTime,
  waitUntil,
  type ChunkListener,
  type LoadStream,
  type LoadTarget,
} from './load-target.js';
import { SocketIoLoadStream } from './socketio-load-stream.js';
import { SseLoadStream } from './sse-load-stream.js';

/** Connects a stream to `target` (an SSE stream connects with its request, at its start). */
export function connectLoadStream(target: LoadTarget, onChunk: ChunkListener): Promise<LoadStream> {
  switch (target.kind) {
    case 'cpp':
    case 'raw':
      return WsLoadStream.connect(target, onChunk);
    case 'socketio':
      return SocketIoLoadStream.connect(target.url, onChunk);
    case 'sse':
      return Promise.resolve(new SseLoadStream(target.url, onChunk));
  }
}

/** What a start waits for: the new thread's sync (its id), then the answer's first chunk (its first due time). */
interface Awaited {
  type: 'CPP_SYNC_GRAPH' | 'CPP_STREAM_CHUNK';
  resolve(value: string | number): void;
  reject(error: Error): void;
}

/** Both servers encode a chunk with `encodeServerFrame`: type first, the delta last in the payload. */
const CHUNK_PREFIX = Buffer.from('{"type":"CPP_STREAM_CHUNK"');
const DELTA_KEY_BYTES = Buffer.from(DELTA_KEY);

/**
 * One streaming WebSocket connection of the load generator (to CPP or the raw baseline), kept lean because
 * thousands share one process on the machine they measure: until its answer streams, its few frames are parsed as
 * JSON; from then on a chunk is handed over as bytes, and any other frame is skipped unread.
 */
class WsLoadStream implements LoadStream {
  private awaited: Awaited | undefined;

  private constructor(
    private readonly socket: WebSocket,
    private readonly target: LoadTarget,
    private readonly onChunk: ChunkListener,
  ) {
    socket.on('message', (data: Buffer) => this.receive(data));
    socket.on('close', (code: number, reason: Buffer) =>
      this.fail(new Error(`the connection closed (${code} ${reason.toString()})`)),
    );
    // A socket torn down under load must not crash the bench; the measure notices the missing tokens.
    socket.on('error', () => socket.terminate());
  }

  static connect(target: LoadTarget, onChunk: ChunkListener): Promise<WsLoadStream> {
    const protocols = target.kind === 'cpp' ? [CPP_SUBPROTOCOL] : [];
    // The servers are the bench's own: their text frames need no UTF-8 check.
    const socket = new WebSocket(target.url, protocols, {
      perMessageDeflate: false,
      handshakeTimeout: CONNECT_LIMIT_MS,
      skipUTF8Validation: true,
    });
    return new Promise((resolve, reject) => {
      socket.once('open', () => {
        socket.off('error', reject);
        resolve(new WsLoadStream(socket, target, onChunk));
      });
      socket.once('error', reject);
    });
  }

  /** A CPP stream needs a thread first; the prompt (or the raw server's request) starts the model's clock. */
  async start(startAt: number): Promise<number> {
    let threadId = newThreadId();
    if (this.target.kind === 'cpp') {
      const synced = this.await('CPP_SYNC_GRAPH');
      this.socket.send(JSON.stringify(clientFrame('CPP_THREAD_OPEN', { patches: true })));
      threadId = String(await synced);
    }
    await waitUntil(startAt);
    if (this.socket.readyState !== WebSocket.OPEN)
      throw new Error('the connection closed before its answer was asked for');
    const firstChunk = this.await('CPP_STREAM_CHUNK');
    const request =
      this.target.kind === 'cpp'
        ? clientFrame('CPP_PROMPT', {
            activeThreadId: threadId,
            userPrompt: 'tell me a long story',
            newNodeId: newMessageId(),
          })
        : { type: 'stream', payload: { threadId, nodeId: newMessageId() } };
    this.socket.send(JSON.stringify(request));
    return Number(await firstChunk);
  }

  close(): void {
    this.socket.terminate();
  }

  private await(type: Awaited['type']): Promise<string | number> {
    return new Promise((resolve, reject) => {
      this.awaited = { type, resolve, reject };
    });
  }

  private receive(data: Buffer): void {
    const deltaFrom = deltaStart(data);
    if (deltaFrom >= 0) {
      this.onChunk(data, deltaFrom);
      if (this.awaited?.type === 'CPP_STREAM_CHUNK') this.settle(firstDueTime(data, deltaFrom));
      return;
    }
    if (this.awaited === undefined) return;
    const frame = JSON.parse(data.toString('utf8')) as {
      type: string;
      payload: { threadId?: string; code?: string; message?: string };
    };
    if (frame.type === 'CPP_ERROR')
      this.fail(new Error(`the server answered CPP_ERROR ${frame.payload.code}: ${frame.payload.message}`));
    else if (frame.type === 'CPP_SYNC_GRAPH' && this.awaited.type === 'CPP_SYNC_GRAPH')
      this.settle(frame.payload.threadId!);
  }

  private settle(value: string | number): void {
    const awaited = this.awaited;
    this.awaited = undefined;
    awaited?.resolve(value);
  }

  private fail(error: Error): void {
    const awaited = this.awaited;
    this.awaited = undefined;
    awaited?.reject(error);
  }
}

/** Where a CPP_STREAM_CHUNK's delta text begins in its bytes; -1 for any other frame. */
function deltaStart(bytes: Buffer): number {
  if (
    bytes.length < CHUNK_PREFIX.length ||
    bytes.compare(CHUNK_PREFIX, 0, CHUNK_PREFIX.length, 0, CHUNK_PREFIX.length) !== 0
  )
    return -1;
  const at = bytes.indexOf(DELTA_KEY_BYTES, CHUNK_PREFIX.length);
  return at < 0 ? -1 : at + DELTA_KEY_BYTES.length;
}
