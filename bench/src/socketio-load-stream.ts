import { newMessageId, newThreadId } from '@promethea/cpp-protocol';
import { io, type Socket } from 'socket.io-client';
import { Decoder, Encoder, PacketType } from 'socket.io-parser';
import {
  CONNECT_LIMIT_MS,
  DELTA_KEY,
  firstDueTime,
  waitUntil,
  type ChunkListener,
  type LoadStream,
} from './load-target.js';
import { SOCKETIO_CHUNK_EVENT, SOCKETIO_START_EVENT, type SocketIoStreamRequest } from './peer-protocols.js';

/** How a chunk event reaches the client: an event packet (type 2) of the main namespace, its name first. */
const CHUNK_PACKET_PREFIX = `${PacketType.EVENT}["${SOCKETIO_CHUNK_EVENT}",`;

/**
 * socket.io-parser's decoder, but for chunk events: their text is handed on as it came instead of parsed, so that
 * the load generator reads their tokens as lean as it reads CPP's frames (a JSON parse of every frame would cost it
 * several times more CPU). The wire format is socket.io's own: the server and the encoder are untouched.
 */
class ChunkPassingDecoder extends Decoder {
  override add(data: unknown): void {
    if (typeof data === 'string' && data.startsWith(CHUNK_PACKET_PREFIX))
      this.emitReserved('decoded', { type: PacketType.EVENT, nsp: '/', data: [SOCKETIO_CHUNK_EVENT, data] });
    else super.add(data);
  }
}
const leanParser = { Encoder, Decoder: ChunkPassingDecoder };

/**
 * One Socket.IO client of the load generator: `socket.io-client` over the WebSocket transport (as Open WebUI's web
 * client connects), one connection each, no reconnection (a dropped stream shows as missing tokens).
 */
export class SocketIoLoadStream implements LoadStream {
  private firstChunk: { resolve(due: number): void; reject(error: Error): void } | undefined;

  private constructor(
    private readonly socket: Socket,
    onChunk: ChunkListener,
  ) {
    socket.on(SOCKETIO_CHUNK_EVENT, (text: string) => {
      const deltaFrom = text.indexOf(DELTA_KEY, CHUNK_PACKET_PREFIX.length) + DELTA_KEY.length;
      onChunk(text, deltaFrom);
      const awaited = this.firstChunk;
      this.firstChunk = undefined;
      awaited?.resolve(firstDueTime(text, deltaFrom));
    });
    socket.on('disconnect', (reason) => {
      const awaited = this.firstChunk;
      this.firstChunk = undefined;
      awaited?.reject(new Error(`the connection closed (${reason})`));
    });
  }

  static connect(url: string, onChunk: ChunkListener): Promise<SocketIoLoadStream> {
    const socket = io(url, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      timeout: CONNECT_LIMIT_MS,
      parser: leanParser,
    });
    return new Promise((resolve, reject) => {
      socket.once('connect', () => {
        socket.off('connect_error', reject);
        resolve(new SocketIoLoadStream(socket, onChunk));
      });
      socket.once('connect_error', (error) => {
        socket.close();
        reject(error);
      });
    });
  }

  async start(startAt: number): Promise<number> {
    await waitUntil(startAt);
    if (!this.socket.connected) throw new Error('the connection closed before its answer was asked for');
    const first = new Promise<number>((resolve, reject) => (this.firstChunk = { resolve, reject }));
    this.socket.emit(SOCKETIO_START_EVENT, {
      threadId: newThreadId(),
      nodeId: newMessageId(),
    } satisfies SocketIoStreamRequest);
    return first;
  }

  close(): void {
    this.socket.close();
  }
}
