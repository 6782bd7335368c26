import { encodeServerFrame, type StreamChunkFrame } from '@promethea/cpp-protocol';
import type { CPPSocket } from '../transport/cpp-socket.js';

export type ChunkPayload = StreamChunkFrame['payload'];

export interface BackpressureLimits {
  /** Past this many bytes waiting in the socket, frames wait here and a node's chunks merge. Default 1 MiB. */
  softLimitBytes: number;
  /**
   * Past this many bytes waiting in the socket and here together, the connection is given up. Default 32 MiB. A frame
   * being written counts: one frame that alone takes the socket's buffer past it gives the connection up too.
   */
  hardLimitBytes: number;
}

export const DEFAULT_BACKPRESSURE_LIMITS: BackpressureLimits = {
  softLimitBytes: 1024 * 1024,
  hardLimitBytes: 32 * 1024 * 1024,
};

interface Waiting {
  text: string;
  bytes: number;
  /** Set for a CPP_STREAM_CHUNK, whose delta later chunks of the node may extend. */
  chunk?: ChunkPayload;
  merged: boolean;
}

/**
 * What a connection sends, paced by its socket so that a slow reader cannot grow server memory without bound.
 * While the socket's buffer is under the soft limit frames go straight out. Above it they wait here, in order;
 * a chunk of a node whose previous chunk still waits (with no other frame queued behind that one) is appended to
 * it, which keeps the offset rules: one chunk with the first offset and the concatenated delta. When the socket's
 * buffer and this queue together pass the hard limit, the queue is dropped, nothing more is sent, and `overflow`
 * is called: the connection is closed, and the client resumes from a sync when it reconnects. The budget is checked
 * after every write as well, since a single large frame (a sync of a big thread) goes straight into the socket's
 * buffer, where a reader that never reads would otherwise hold it for good. Every frame of the
 * connection goes through here with a `written` callback, so while frames wait a callback is always on its way.
 */
export class BackpressureQueue {
  private readonly waiting: Waiting[] = [];
  /**
   * The waiting chunk of each node that a later chunk of that node may still be merged into. Made when a chunk first
   * waits: most connections never fall behind, and an idle one should not hold an empty map.
   */
  private open: Map<string, Waiting> | undefined;
  private waitingBytes = 0;
  private overflowed = false;
  private readonly written = () => this.drain();

  constructor(
    private readonly socket: CPPSocket,
    private readonly limits: BackpressureLimits,
    private readonly overflow: () => void,
  ) {}

  /** Bytes waiting here, behind the socket's own buffer. */
  get queuedBytes(): number {
    return this.waitingBytes;
  }

  /** `chunk` is given when `text` is a CPP_STREAM_CHUNK. */
  send(text: string, chunk?: ChunkPayload): void {
    if (this.overflowed) return;
    if (this.waiting.length === 0 && this.socket.bufferedAmount < this.limits.softLimitBytes)
      this.socket.send(text, this.written);
    else this.enqueue(text, chunk);
    this.checkBudget();
  }

  private checkBudget(): void {
    if (!this.overflowed && this.socket.bufferedAmount + this.waitingBytes > this.limits.hardLimitBytes) this.giveUp();
  }

  private enqueue(text: string, chunk: ChunkPayload | undefined): void {
    const previous = chunk && this.open?.get(chunk.nodeId);
    if (chunk && previous?.chunk && previous.chunk.offset + previous.chunk.delta.length === chunk.offset) {
      previous.chunk = { ...previous.chunk, delta: previous.chunk.delta + chunk.delta };
      previous.merged = true;
      const bytes = Buffer.byteLength(chunk.delta);
      previous.bytes += bytes;
      this.waitingBytes += bytes;
      return;
    }
    const entry: Waiting = { text, bytes: Buffer.byteLength(text), merged: false, ...(chunk ? { chunk } : {}) };
    this.waiting.push(entry);
    this.waitingBytes += entry.bytes;
    // A chunk merged into an entry in front of another frame would overtake that frame.
    if (!chunk) this.open?.clear();
    else (this.open ??= new Map()).set(chunk.nodeId, entry);
  }

  private drain(): void {
    while (!this.overflowed && this.waiting.length > 0 && this.socket.bufferedAmount < this.limits.softLimitBytes) {
      const entry = this.waiting.shift()!;
      this.waitingBytes -= entry.bytes;
      if (entry.chunk && this.open?.get(entry.chunk.nodeId) === entry) this.open.delete(entry.chunk.nodeId);
      this.socket.send(
        entry.merged && entry.chunk ? encodeServerFrame('CPP_STREAM_CHUNK', entry.chunk) : entry.text,
        this.written,
      );
      this.checkBudget();
    }
  }

  private giveUp(): void {
    this.overflowed = true;
    this.waiting.length = 0;
    this.open = undefined;
    this.waitingBytes = 0;
    this.overflow();
  }
}
