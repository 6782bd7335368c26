import { decodeServerFrame, encodeServerFrame, type ServerFrame } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { BackpressureQueue, type ChunkPayload } from '../../src/session/backpressure.js';
import type { CPPSocket } from '../../src/transport/cpp-socket.js';

const LIMITS = { softLimitBytes: 1000, hardLimitBytes: 5000 };
const THREAD = 'thread_backpressure';

/** A socket whose buffer fills as frames are sent and empties when the test says: `flush` writes it all out. */
class FakeSocket implements CPPSocket {
  bufferedAmount = 0;
  readonly sent: ServerFrame[] = [];
  private callbacks: Array<() => void> = [];

  send(text: string, written?: () => void): void {
    const decoded = decodeServerFrame(text);
    if (!decoded.ok) throw new Error(decoded.message);
    this.sent.push(decoded.frame);
    this.bufferedAmount += Buffer.byteLength(text);
    if (written) this.callbacks.push(written);
  }

  flush(): void {
    this.bufferedAmount = 0;
    for (const written of this.callbacks.splice(0)) written();
  }

  close(): void {}
  terminate(): void {}
  limitMessageBytes(): void {}
}

function chunk(nodeId: string, offset: number, delta: string): [string, ChunkPayload] {
  const payload = { threadId: THREAD, nodeId, offset, delta };
  return [encodeServerFrame('CPP_STREAM_CHUNK', payload), payload];
}

const anchorSync = encodeServerFrame('CPP_SYNC_GRAPH', {
  threadId: THREAD,
  rootNodeId: null,
  activeHeadMessageId: null,
  nodes: {},
  version: 0,
  title: '',
});

function setUp() {
  const socket = new FakeSocket();
  let overflows = 0;
  const queue = new BackpressureQueue(socket, LIMITS, () => (overflows += 1));
  return { socket, queue, overflows: () => overflows };
}

function summary(frames: ServerFrame[]): string[] {
  return frames.map((frame) =>
    frame.type === 'CPP_STREAM_CHUNK'
      ? `${frame.payload.nodeId}@${frame.payload.offset}:${frame.payload.delta}`
      : frame.type,
  );
}

describe('BackpressureQueue', () => {
  it('sends at once while the socket buffer is under the soft limit', () => {
    const { socket, queue } = setUp();
    queue.send(...chunk('msg_a', 0, 'Hello'));
    queue.send(...chunk('msg_a', 5, ' world'));
    expect(summary(socket.sent)).toEqual(['msg_a@0:Hello', 'msg_a@5: world']);
    expect(queue.queuedBytes).toBe(0);
  });

  it('merges the waiting chunks of a node into one, with the first offset and the deltas joined', () => {
    const { socket, queue } = setUp();
    queue.send(...chunk('msg_a', 0, 'One'));
    socket.bufferedAmount = 2000;
    queue.send(...chunk('msg_a', 3, ' two'));
    queue.send(...chunk('msg_a', 7, ' three'));
    queue.send(...chunk('msg_a', 13, ' four'));
    expect(summary(socket.sent)).toEqual(['msg_a@0:One']);
    expect(queue.queuedBytes).toBeGreaterThan(0);

    socket.flush();
    expect(summary(socket.sent)).toEqual(['msg_a@0:One', 'msg_a@3: two three four']);
    expect(queue.queuedBytes).toBe(0);
  });

  it('never merges a chunk across another frame waiting before it, and merges each node apart', () => {
    const { socket, queue } = setUp();
    queue.send(anchorSync);
    socket.bufferedAmount = 2000;
    queue.send(...chunk('msg_a', 0, 'a1'));
    queue.send(...chunk('msg_b', 0, 'b1'));
    queue.send(...chunk('msg_a', 2, 'a2'));
    queue.send(...chunk('msg_b', 2, 'b2'));
    queue.send(anchorSync);
    queue.send(...chunk('msg_a', 4, 'a3'));
    queue.send(...chunk('msg_a', 6, 'a4'));

    socket.flush();
    expect(summary(socket.sent)).toEqual([
      'CPP_SYNC_GRAPH',
      'msg_a@0:a1a2',
      'msg_b@0:b1b2',
      'CPP_SYNC_GRAPH',
      'msg_a@4:a3a4',
    ]);
  });

  it('sends the waiting frames in order as the socket drains, and only while it stays under the soft limit', () => {
    const { socket, queue } = setUp();
    queue.send(anchorSync);
    socket.bufferedAmount = 2000;
    queue.send(...chunk('msg_a', 0, 'x'));
    queue.send(anchorSync);
    expect(summary(socket.sent)).toEqual(['CPP_SYNC_GRAPH']);
    socket.flush();
    expect(summary(socket.sent)).toEqual(['CPP_SYNC_GRAPH', 'msg_a@0:x', 'CPP_SYNC_GRAPH']);
  });

  it('stops sending the waiting frames as soon as the socket is over the soft limit again', () => {
    const { socket, queue } = setUp();
    queue.send(anchorSync);
    socket.bufferedAmount = 2000;
    for (const nodeId of ['msg_a', 'msg_b', 'msg_c']) queue.send(...chunk(nodeId, 0, 'x'.repeat(400)));
    socket.flush();
    expect(summary(socket.sent).map((line) => line.slice(0, 9))).toEqual(['CPP_SYNC_', 'msg_a@0:x', 'msg_b@0:x']);
    socket.flush();
    expect(summary(socket.sent).map((line) => line.slice(0, 9))).toEqual([
      'CPP_SYNC_',
      'msg_a@0:x',
      'msg_b@0:x',
      'msg_c@0:x',
    ]);
  });

  it('gives up past the hard limit: drops what waits, sends nothing more, and reports the overflow once', () => {
    const { socket, queue, overflows } = setUp();
    socket.bufferedAmount = 4000;
    queue.send(...chunk('msg_a', 0, 'x'.repeat(500)));
    expect(overflows()).toBe(0);
    queue.send(...chunk('msg_a', 500, 'y'.repeat(600)));
    expect(overflows()).toBe(1);
    expect(queue.queuedBytes).toBe(0);

    queue.send(anchorSync);
    socket.flush();
    expect(socket.sent).toEqual([]);
    expect(overflows()).toBe(1);
  });
});
