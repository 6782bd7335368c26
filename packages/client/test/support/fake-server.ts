import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CPP_DID_HEADER,
  CPP_DID_QUERY_PARAMETER,
  CPP_SESSION_PATH,
  CPP_SUBPROTOCOL,
  CPPError,
  ErrorCode,
  applyChange,
  decodeClientFrame,
  emptyGraph,
  encodeServerFrame,
  getNode,
  newMessageId,
  planAnchor,
  planFinish,
  planPivotSplice,
  planPrompt,
  type ClientFrame,
  type ClientFrameType,
  type ServerFrameType,
  type ServerPayload,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { WebSocketServer, type WebSocket } from 'ws';

export interface Handshake {
  did: string | undefined;
  didFromHeader: boolean;
  url: string;
}

type Frame<Type extends ClientFrameType> = Extract<ClientFrame, { type: Type }>;
type Handler<Type extends ClientFrameType> = (frame: Frame<Type>, peer: WebSocket) => void;

/**
 * A scripted CPP server over a real `ws` server on port 0. It answers every frame as the real server does, using
 * the protocol's tree operations, but a generation only advances when the test calls `chunk` / `complete`, so
 * tests decide exactly when text flows. `handle` replaces the answer to one frame type.
 */
export class FakeServer {
  readonly received: ClientFrame[] = [];
  readonly handshakes: Handshake[] = [];
  readonly peers: WebSocket[] = [];
  private readonly threads = new Map<string, ThreadGraph>();
  private readonly subscribers = new Map<string, Map<WebSocket, { patches: boolean }>>();
  private readonly handlers = new Map<ClientFrameType, Handler<ClientFrameType>>();
  private readonly onceHandlers = new Map<ClientFrameType, Handler<ClientFrameType>>();
  private readonly frameWaiters: Array<() => void> = [];

  private constructor(private readonly server: WebSocketServer) {
    server.on('connection', (peer, request) => this.accept(peer, request));
  }

  static async start(): Promise<FakeServer> {
    const server = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      path: CPP_SESSION_PATH,
      handleProtocols: (protocols) => (protocols.has(CPP_SUBPROTOCOL) ? CPP_SUBPROTOCOL : false),
      verifyClient: ({ req }, done) => done(offersSubprotocol(req), 400, 'subprotocol cpp-v1.0.0 required'),
    });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return new FakeServer(server);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}${CPP_SESSION_PATH}`;
  }

  graph(threadId: string): ThreadGraph {
    const graph = this.threads.get(threadId);
    if (!graph) throw new Error(`fake server has no thread ${threadId}`);
    return graph;
  }

  /** Replaces the default answer to one frame type. */
  handle<Type extends ClientFrameType>(type: Type, handler: Handler<Type>): void {
    this.handlers.set(type, handler as unknown as Handler<ClientFrameType>);
  }

  /** Replaces the answer to the next frame of one type only; later ones get the usual answer again. */
  handleOnce<Type extends ClientFrameType>(type: Type, handler: Handler<Type>): void {
    this.onceHandlers.set(type, handler as unknown as Handler<ClientFrameType>);
  }

  /** The `count`-th frame of `type` this server has received, once it has arrived and been answered. */
  async frame<Type extends ClientFrameType>(type: Type, count = 1): Promise<Frame<Type>> {
    for (;;) {
      const frames = this.framesOf(type);
      if (frames.length >= count) return frames[count - 1]!;
      await new Promise<void>((resolve) => this.frameWaiters.push(resolve));
    }
  }

  framesOf<Type extends ClientFrameType>(type: Type): Frame<Type>[] {
    return this.received.filter((frame): frame is Frame<Type> => frame.type === type);
  }

  send<Type extends ServerFrameType>(peer: WebSocket, type: Type, payload: ServerPayload<Type>): void {
    peer.send(encodeServerFrame(type, payload));
  }

  /** Sends a frame to every subscriber of the thread. */
  broadcast<Type extends ServerFrameType>(threadId: string, type: Type, payload: ServerPayload<Type>): void {
    for (const peer of this.subscribers.get(threadId)?.keys() ?? []) this.send(peer, type, payload);
  }

  /** Appends text to a streaming node and sends it as a chunk at the right offset. */
  chunk(threadId: string, nodeId: string, delta: string): void {
    const node = this.node(threadId, nodeId);
    const offset = node.content.length;
    node.content += delta;
    this.broadcast(threadId, 'CPP_STREAM_CHUNK', { threadId, nodeId, offset, delta });
  }

  complete(threadId: string, nodeId: string): void {
    const node = this.node(threadId, nodeId);
    this.broadcast(threadId, 'CPP_STREAM_COMPLETED', {
      threadId,
      nodeId,
      finalContentLength: node.content.length,
      finishReason: 'stop',
    });
    this.commit(planFinish(this.graph(threadId), { nodeId, status: 'completed', content: node.content }));
  }

  /** The node streaming in a thread; fails the test when there is none. */
  streaming(threadId: string): string {
    const node = Object.values(this.graph(threadId).nodes).find((candidate) => candidate.status === 'streaming');
    if (!node) throw new Error(`nothing streams in ${threadId}`);
    return node.id;
  }

  /** Applies a change and tells each subscriber as it asked: a patch, or the whole graph. */
  commit(change: TreeChange): void {
    applyChange(this.graph(change.threadId), change);
    for (const [peer, { patches }] of this.subscribers.get(change.threadId) ?? []) {
      if (!patches) this.sendSync(peer, change.threadId);
      else {
        const { threadId, version, rootNodeId, activeHeadMessageId } = change;
        const nodes = Object.fromEntries(change.nodes.map((node) => [node.id, node]));
        this.send(peer, 'CPP_GRAPH_PATCH', { threadId, version, rootNodeId, activeHeadMessageId, nodes });
      }
    }
  }

  sendSync(peer: WebSocket, threadId: string): void {
    const { rootNodeId, activeHeadMessageId, nodes, version } = this.graph(threadId);
    this.send(peer, 'CPP_SYNC_GRAPH', { threadId, rootNodeId, activeHeadMessageId, nodes, version, title: '' });
  }

  async close(): Promise<void> {
    for (const peer of this.peers) peer.terminate();
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }

  private accept(peer: WebSocket, request: IncomingMessage): void {
    const header = request.headers[CPP_DID_HEADER.toLowerCase()];
    const url = new URL(request.url ?? '/', 'ws://fake');
    const headerDid = typeof header === 'string' ? header : undefined;
    this.handshakes.push({
      did: headerDid ?? url.searchParams.get(CPP_DID_QUERY_PARAMETER) ?? undefined,
      didFromHeader: headerDid !== undefined,
      url: request.url ?? '',
    });
    this.peers.push(peer);
    peer.on('message', (data) => this.receive(peer, String(data)));
  }

  private receive(peer: WebSocket, text: string): void {
    const decoded = decodeClientFrame(text);
    if (!decoded.ok) throw new Error(`client sent an invalid frame: ${decoded.message}`);
    const frame = decoded.frame;
    this.received.push(frame);
    const once = this.onceHandlers.get(frame.type);
    this.onceHandlers.delete(frame.type);
    try {
      (once ?? this.handlers.get(frame.type) ?? this.answer)(frame, peer);
    } catch (error) {
      if (!CPPError.isInstance(error)) throw error;
      this.send(peer, 'CPP_ERROR', {
        code: error.code,
        message: error.message,
        refType: frame.type,
        ...(frame.id ? { refId: frame.id } : {}),
      });
    }
    for (const wake of this.frameWaiters.splice(0)) wake();
  }

  /** The usual answer to a frame; a handler that holds a frame back gives it later with this. */
  readonly answer = (frame: ClientFrame, peer: WebSocket): void => {
    switch (frame.type) {
      case 'CPP_THREAD_OPEN':
        return this.open(peer, frame.payload.threadId ?? `thread_${Date.now()}`, frame.payload.patches ?? false);
      case 'CPP_SYNC_REQUEST':
        return this.sendSync(peer, frame.payload.threadId);
      case 'CPP_THREAD_LIST':
        return this.send(peer, 'CPP_THREADS', { threads: [...this.threads.values()].map(summary), nextCursor: null });
      case 'CPP_PROMPT':
        return this.prompt(frame.payload);
      case 'CPP_PIVOT_INIT':
        return this.pivot(frame.payload);
      case 'CPP_ANCHOR_HEAD':
        return this.commit(planAnchor(this.graph(frame.payload.activeThreadId), frame.payload.targetNodeId));
      case 'CPP_STREAM_STOP':
        return this.stop(frame.payload);
      case 'CPP_THREAD_CLOSE':
        return void this.subscribers.get(frame.payload.threadId)?.delete(peer);
    }
  };

  private open(peer: WebSocket, threadId: string, patches: boolean): void {
    if (!this.threads.has(threadId)) this.threads.set(threadId, emptyGraph(threadId));
    const subscribers = this.subscribers.get(threadId) ?? new Map<WebSocket, { patches: boolean }>();
    subscribers.set(peer, { patches });
    this.subscribers.set(threadId, subscribers);
    this.sendSync(peer, threadId);
  }

  private prompt(payload: Frame<'CPP_PROMPT'>['payload']): void {
    const graph = this.graph(payload.activeThreadId);
    if (Object.values(graph.nodes).some((node) => node.status === 'streaming'))
      throw new CPPError(ErrorCode.THREAD_BUSY, 'busy');
    const { userPrompt, newNodeId: userNodeId, parentNodeId } = payload;
    this.commit(
      planPrompt(graph, {
        userPrompt,
        userNodeId,
        assistantNodeId: newMessageId(),
        createdAt: Date.now(),
        ...(parentNodeId ? { parentNodeId } : {}),
      }),
    );
  }

  private pivot(payload: Frame<'CPP_PIVOT_INIT'>['payload']): void {
    const { activeThreadId: threadId, interruptedNodeId, userPrompt, newBranchNodeId: userNodeId } = payload;
    const interrupted = this.node(threadId, interruptedNodeId);
    const cutContent =
      interrupted.status === 'streaming'
        ? this.halt(threadId, interruptedNodeId, payload.receivedContentLength, 'pivot')
        : undefined;
    const exchange = {
      interruptedNodeId,
      userPrompt,
      userNodeId,
      assistantNodeId: newMessageId(),
      createdAt: Date.now(),
    };
    this.commit(
      planPivotSplice(this.graph(threadId), cutContent === undefined ? exchange : { ...exchange, cutContent }),
    );
  }

  private stop(payload: Frame<'CPP_STREAM_STOP'>['payload']): void {
    const { activeThreadId: threadId, nodeId } = payload;
    if (this.node(threadId, nodeId).status !== 'streaming')
      throw new CPPError(ErrorCode.NOT_STREAMING, 'not streaming');
    const content = this.halt(threadId, nodeId, payload.receivedContentLength, 'stop');
    this.commit(planFinish(this.graph(threadId), { nodeId, status: 'interrupted', content }));
  }

  /** Sends CPP_STREAM_HALTED with the cut at the smaller of what was sent and what the client saw. */
  private halt(threadId: string, nodeId: string, received: number | undefined, reason: 'pivot' | 'stop'): string {
    const content = this.node(threadId, nodeId).content;
    const finalContentLength = Math.min(received ?? content.length, content.length);
    this.broadcast(threadId, 'CPP_STREAM_HALTED', {
      interruptedNodeId: nodeId,
      finalContentLength,
      lastChunkReceived: '',
      threadId,
      reason,
    });
    return content.slice(0, finalContentLength);
  }

  private node(threadId: string, nodeId: string) {
    const node = getNode(this.graph(threadId), nodeId);
    if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `no node ${nodeId}`);
    return node;
  }
}

function offersSubprotocol(request: IncomingMessage): boolean {
  const offered = request.headers['sec-websocket-protocol'] ?? '';
  return offered.split(',').some((protocol) => protocol.trim() === CPP_SUBPROTOCOL);
}

function summary(graph: ThreadGraph) {
  const nodeCount = Object.keys(graph.nodes).length;
  return { threadId: graph.threadId, title: '', createdAt: 0, updatedAt: 0, version: graph.version, nodeCount };
}
