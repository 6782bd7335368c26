import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import type { BenchContext, RunningServer } from './bench-context.js';
import type { BaselineRequest } from './baseline-server.js';
import { BenchSocket, type AnyFrame, type Received } from './bench-socket.js';
import { clientFrame } from './cpp-frames.js';
import { figure, ratioTarget, valueTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import type { LargeThreadShape } from './large-thread.js';

/** A size, the same on any machine: a number of its own. */
const PIVOT_BYTES_TARGET = 2048;
/** CPP ÷ the same run's baseline: a full sync's time ÷ ws sending as many bytes, from memory and from the store; its size ÷ the nodes' text. */
const SYNC_TIME_TARGET = 2;
const COLD_OPEN_TARGET = 5;
const SYNC_BYTES_TARGET = 1.3;
/** Opens of the thread from the store, each after it was unloaded: one alone is at the mercy of the machine's load. */
const COLD_OPENS = 5;
/** Chunks the answer streams before it is pivoted: a pivot a moment into an answer, as a reader reacts. */
const CHUNKS_BEFORE_PIVOT = 10;
const PIVOTS = 5;

interface SyncDetails {
  nodes: number;
  /** The CPP_SYNC_GRAPH message's UTF-8 bytes. */
  syncBytes: number;
  /** The bytes it took on the wire (read from the TCP socket): its WebSocket frame, compressed if it was. */
  wireBytes: number;
  /** UTF-8 bytes of the nodes' text alone: what any encoding of the thread must carry. */
  contentBytes: number;
  /** CPP_THREAD_OPEN of the thread not yet in memory → its CPP_SYNC_GRAPH: load from the store, encode, send. */
  coldOpen: LatencySummary;
  /** CPP_SYNC_REQUEST → CPP_SYNC_GRAPH of the loaded thread, compressed (permessage-deflate), as a browser gets it. */
  warm: LatencySummary;
  /** The same for a client that does not offer permessage-deflate: the frame as it is. */
  warmUncompressed: LatencySummary;
  /** The bare ws server sending the same frame, kept encoded, on request. */
  raw: LatencySummary;
  /**
   * The server process's CPU time (its thread pool's included: compression) per sync, median: steadier than the
   * times on a loaded machine.
   */
  serverCpuMs: { coldOpen: number; warm: number; warmUncompressed: number; raw: number };
  /** Per pivot: bytes of graph frames in patch mode and in full-sync mode, and the cut's length. */
  pivots: Array<{ patchBytes: number; fullSyncBytes: number; cutLength: number }>;
}

/**
 * Measure 5: the cost of a full CPP_SYNC_GRAPH of a large thread (bytes, and time against a bare ws transfer of the
 * same bytes), and the bytes of graph frames one pivot in that thread sends: a patch-mode subscriber's
 * CPP_GRAPH_PATCH against a full-sync subscriber's CPP_SYNC_GRAPH (the seed spec's behaviour).
 *
 * The bare server sends the very frame CPP sent, so that the client reads, validates and parses the same text from
 * either, and the two are asked in turn, sample by sample, so that the client's garbage from parsing one frame and
 * the machine's load fall on both alike.
 */
export async function measureSync(context: BenchContext): Promise<{ figures: Figure[]; details: SyncDetails }> {
  const shape: LargeThreadShape = { nodes: context.options.syncNodes, answerChars: context.options.syncAnswerChars };
  context.log(`sync: a ${shape.nodes}-node thread`);
  const server = await context.startServer('cpp');
  const rawServer = await context.startServer('raw');
  // Browsers' connections: the server may compress what it sends them (the bare server does not). One more client
  // does not offer it, for the time of the frame as it is.
  const patchSocket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL, { offerCompression: true });
  const fullSocket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL, { offerCompression: true });
  const plainSocket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL);
  const rawSocket = await BenchSocket.connect(rawServer.url, undefined, { offerCompression: true });
  let details: SyncDetails;
  try {
    const seed = await server.process.request<{ threadId: string; nodes: number; contentBytes: number }>(
      'seedThread',
      shape,
    );
    const openThread = clientFrame('CPP_THREAD_OPEN', { threadId: seed.threadId, patches: true });
    const wireBefore = patchSocket.wireBytesRead;
    const coldOpen = new SyncSamples();
    const synced = await coldOpen.take(patchSocket, openThread, server);
    const wireBytes = patchSocket.wireBytesRead - wireBefore;
    for (let open = 1; open < COLD_OPENS; open += 1) {
      await unload(patchSocket, server, seed.threadId);
      await coldOpen.take(patchSocket, openThread, server);
    }
    rawSocket.send({ type: 'keep', payload: { text: synced.text } } satisfies BaselineRequest);
    await roundTrip(plainSocket, openThread, 'CPP_SYNC_GRAPH');
    const syncRequest = clientFrame('CPP_SYNC_REQUEST', { threadId: seed.threadId });
    const [warm, warmUncompressed, raw] = [new SyncSamples(), new SyncSamples(), new SyncSamples()];
    for (let sample = 0; sample < context.options.syncSamples; sample += 1) {
      await warm.take(patchSocket, syncRequest, server);
      await warmUncompressed.take(plainSocket, syncRequest, server);
      await raw.take(rawSocket, { type: 'resend' } satisfies BaselineRequest, rawServer);
    }
    await roundTrip(fullSocket, clientFrame('CPP_THREAD_OPEN', { threadId: seed.threadId }), 'CPP_SYNC_GRAPH');
    const pivots = [];
    for (let pivot = 0; pivot < PIVOTS; pivot += 1)
      pivots.push(await pivotBytes(patchSocket, fullSocket, seed.threadId));
    details = {
      nodes: seed.nodes,
      contentBytes: seed.contentBytes,
      syncBytes: synced.bytes,
      wireBytes,
      coldOpen: coldOpen.times.summary(),
      warm: warm.times.summary(),
      warmUncompressed: warmUncompressed.times.summary(),
      raw: raw.times.summary(),
      serverCpuMs: {
        coldOpen: median(coldOpen.cpuMs),
        warm: median(warm.cpuMs),
        warmUncompressed: median(warmUncompressed.cpuMs),
        raw: median(raw.cpuMs),
      },
      pivots,
    };
  } finally {
    patchSocket.close();
    fullSocket.close();
    plainSocket.close();
    rawSocket.close();
    await server.process.stop();
    await rawServer.process.stop();
  }
  return { figures: syncFigures(details), details };
}

/** Sends `frame` and waits for the answer of type `type`. */
function roundTrip<Type extends AnyFrame['type']>(
  socket: BenchSocket,
  frame: object,
  type: Type,
): Promise<Received & { frame: Extract<AnyFrame, { type: Type }> }> {
  const answered = socket.next(type);
  socket.send(frame);
  return answered;
}

/** Syncs of one kind: each one's time from the request to the CPP_SYNC_GRAPH it asks for, and the server's CPU meanwhile. */
class SyncSamples {
  readonly times = new LatencyRecorder();
  readonly cpuMs: number[] = [];

  async take(socket: BenchSocket, request: object, server: RunningServer): Promise<Received> {
    const cpuBefore = await cpuMsOf(server);
    const sentAt = performance.now();
    const synced = await roundTrip(socket, request, 'CPP_SYNC_GRAPH');
    this.times.record(synced.receivedAt - sentAt);
    this.cpuMs.push((await cpuMsOf(server)) - cpuBefore);
    return synced;
  }
}

/**
 * Closes the thread on the socket, its only subscriber, and waits until that is applied (a thread list is answered
 * after it), when the server lets go of the thread; then has the server collect its garbage, as before the first open.
 */
async function unload(socket: BenchSocket, server: RunningServer, threadId: string): Promise<void> {
  socket.send(clientFrame('CPP_THREAD_CLOSE', { threadId }));
  await roundTrip(socket, clientFrame('CPP_THREAD_LIST', {}), 'CPP_THREADS');
  await server.process.request('memory');
}

function cpuMsOf(server: RunningServer): Promise<number> {
  return server.process.request<number>('cpuMs');
}

/** Prompts at the head, lets the answer stream a little, pivots it, and counts each subscriber's graph-frame bytes. */
async function pivotBytes(
  patchSocket: BenchSocket,
  fullSocket: BenchSocket,
  threadId: string,
): Promise<SyncDetails['pivots'][number]> {
  const firstChunk = patchSocket.next('CPP_STREAM_CHUNK');
  patchSocket.send(
    clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'go on', newNodeId: newMessageId() }),
  );
  const nodeId = (await firstChunk).frame.payload.nodeId;
  for (let chunk = 1; chunk < CHUNKS_BEFORE_PIVOT; chunk += 1) await patchSocket.next('CPP_STREAM_CHUNK');
  const patchBytes = graphBytesUntilNewBranch(patchSocket, nodeId);
  const fullSyncBytes = graphBytesUntilNewBranch(fullSocket, nodeId);
  const halted = patchSocket.next('CPP_STREAM_HALTED');
  patchSocket.send(
    clientFrame('CPP_PIVOT_INIT', {
      activeThreadId: threadId,
      interruptedNodeId: nodeId,
      userPrompt: 'no, the other way',
      newBranchNodeId: newMessageId(),
    }),
  );
  const cutLength = (await halted).frame.payload.finalContentLength;
  const result = { patchBytes: await patchBytes, fullSyncBytes: await fullSyncBytes, cutLength };
  // The new branch streams on; stop it so that the next prompt is not refused as THREAD_BUSY.
  const stopped = patchSocket.next('CPP_GRAPH_PATCH', (frame) =>
    Object.values(frame.payload.nodes).some((node) => node.status === 'interrupted' && node.id !== nodeId),
  );
  const newNodeId = (await patchSocket.next('CPP_STREAM_CHUNK')).frame.payload.nodeId;
  patchSocket.send(clientFrame('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: newNodeId }));
  await stopped;
  return result;
}

/** Bytes of CPP_GRAPH_PATCH and CPP_SYNC_GRAPH frames from now until the first chunk of a node other than `nodeId`. */
function graphBytesUntilNewBranch(socket: BenchSocket, nodeId: string): Promise<number> {
  let bytes = 0;
  socket.onFrame = ({ type, bytes: size }: Received) => {
    if (type === 'CPP_GRAPH_PATCH' || type === 'CPP_SYNC_GRAPH') bytes += size;
  };
  return socket
    .next('CPP_STREAM_CHUNK', (frame) => frame.payload.nodeId !== nodeId)
    .then(() => {
      socket.onFrame = undefined;
      return bytes;
    });
}

function syncFigures(details: SyncDetails): Figure[] {
  const nodes = details.nodes.toLocaleString('en-US');
  const patchBytes = median(details.pivots.map((pivot) => pivot.patchBytes));
  return [
    figure({
      id: 'sync.time.p50',
      label: `CPP_SYNC_GRAPH of a ${nodes}-node thread, time p50 (permessage-deflate)`,
      unit: 'ms',
      value: details.warm.p50,
      baseline: { label: 'ws, same bytes', value: details.raw.p50 },
      target: ratioTarget('≤', SYNC_TIME_TARGET),
    }),
    figure({
      id: 'sync.time-uncompressed.p50',
      label: `CPP_SYNC_GRAPH of it to a client without permessage-deflate, time p50`,
      unit: 'ms',
      value: details.warmUncompressed.p50,
      baseline: { label: 'ws, same bytes', value: details.raw.p50 },
    }),
    figure({
      id: 'sync.cold-open',
      label: `CPP_THREAD_OPEN of it from the store → sync, p50 of ${COLD_OPENS}`,
      unit: 'ms',
      value: details.coldOpen.p50,
      baseline: { label: 'ws, same bytes', value: details.raw.p50 },
      target: ratioTarget('≤', COLD_OPEN_TARGET),
    }),
    figure({
      id: 'sync.bytes',
      label: `CPP_SYNC_GRAPH of a ${nodes}-node thread, bytes on the wire`,
      unit: 'bytes',
      value: details.wireBytes,
      baseline: { label: 'text of the nodes', value: details.contentBytes },
      target: ratioTarget('≤', SYNC_BYTES_TARGET),
    }),
    figure({
      id: 'sync.pivot-graph-bytes',
      label: `Graph frames per pivot in it (patch mode)`,
      unit: 'bytes',
      value: patchBytes,
      baseline: { label: 'full-sync mode', value: median(details.pivots.map((pivot) => pivot.fullSyncBytes)) },
      target: valueTarget('≤', PIVOT_BYTES_TARGET, '≤ 2 KB'),
    }),
  ];
}
