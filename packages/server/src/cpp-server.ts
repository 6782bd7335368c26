import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { CPP_SESSION_PATH, CloseCode, DEFAULT_MAX_FRAME_BYTES, type ClientFrame } from '@promethea/cpp-protocol';
import type { Registry } from 'prom-client';
import { ClusterCoordinator, DEFAULT_CLUSTER_TIMINGS, type ClusterTimings } from './cluster/cluster-coordinator.js';
import type { ClusterTransport } from './cluster/cluster-transport.js';
import { Attachments } from './attachments/attachments.js';
import { AccessControl } from './auth/access-control.js';
import type { AccessOptions } from './auth/access-options.js';
import type { Admission } from './auth/upgrade-admission.js';
import type { Identity } from './engine/identity.js';
import type { HookedFrameType, OperationContext } from './engine/operation-context.js';
import type { PivotContext } from './engine/pivot-context.js';
import { SolitaryLinks } from './engine/solitary-link.js';
import { ThreadRegistry } from './engine/thread-registry.js';
import { StreamPersister } from './engine/stream-persister.js';
import { createHttpHandler } from './http-handler.js';
import { demoModels } from './model/demo-provider.js';
import { DemoToolsProvider } from './model/demo-tools-provider.js';
import { ModelCatalog, type ModelEntry } from './model/model-catalog.js';
import type { ModelProvider } from './model/model-provider.js';
import { createObservability, type ObservabilityOptions } from './observability/observability-options.js';
import { ObservedStore } from './observability/observed-store.js';
import { isUnreachable } from './unreachable.js';
import type { Observers } from './observability/observers.js';
import type { DependedService, ErrorContext } from './observability/server-observer.js';
import { checkReadiness, type ReadinessCheck, type ReadinessReport } from './observability/readiness.js';
import { storeReachable } from './observability/store-check.js';
import { DEFAULT_BACKPRESSURE_LIMITS, type BackpressureLimits } from './session/backpressure.js';
import { ConnectionSession, type SessionDependencies } from './session/connection-session.js';
import type { ConversationStore } from './store/conversation-store.js';
import { MemoryStore } from './store/memory-store.js';
import { ListFeedingStore } from './threads/list-feeding-store.js';
import { type ListRelay, ThreadListFeed } from './threads/thread-list-feed.js';
import { createHttpServer } from './transport/http-server.js';
import type { SocketHandlers } from './transport/cpp-socket.js';
import { openHosted, type Hosting, type HostedSocket } from './transport/hosted-socket.js';
import { createWsTransport, type WsTransport } from './transport/ws-transport.js';
import { demoTools } from './tools/demo-tools.js';
import type { McpServers } from './tools/mcp-config.js';
import type { McpTools } from './tools/mcp-tools.js';
import type { ServerTools } from './tools/server-tool.js';
import { DEFAULT_TOOL_LIMITS, type ToolLimits, ToolRegistry } from './tools/tool-registry.js';
import type { WebSocket } from 'ws';

export interface CPPServerOptions extends ObservabilityOptions, AccessOptions {
  /** Listen on this port (0 picks a free one). Omit when attaching to `server`. */
  port?: number;
  /** Interface to listen on; all interfaces by default. */
  host?: string;
  /** Attach to an existing HTTP server instead of creating one; its other routes and upgrades are left alone. */
  server?: HttpServer;
  /**
   * Neither listen nor attach to an HTTP server: every connection comes through `accept`, from the application's
   * own server (Fastify, Express, a `ws` server). Not together with `port` or `server`.
   */
  noServer?: boolean;
  /** Where conversations live. Default: in memory (gone on exit); the CLI uses SQLite. */
  store?: ConversationStore;
  /**
   * The model that answers. Default: the deterministic demo models, `cpp-demo` and its reasoning mode `demo-reasoning`.
   * Give `models` instead to offer several.
   */
  model?: ModelProvider;
  /**
   * The models clients may choose from (CPP_MODEL_LIST), each named by its id on a prompt or pivot. Default: `model`
   * alone. Not together with `model`.
   */
  models?: readonly ModelEntry[];
  /** The id of the model a prompt without `model` gets. Default: the first of `models`. */
  defaultModel?: string;
  /**
   * Tools the models may call, run by the server (docs/PROTOCOL.md §26): `{ name: { description, inputSchema,
   * execute(input, { signal, threadId, identity }) } }`, the input schema zod or JSON Schema. A server offering the
   * demo's agent (`demo-tools`) adds its demo tools, `clock` and `count_to`, unless these name tools of their own.
   */
  tools?: ServerTools;
  /** Model calls per answer (default 8), a tool call's timeout (default 60 s) and its output's length (256 Ki units). */
  toolLimits?: Partial<ToolLimits>;
  /**
   * MCP servers whose tools the models may call, in the `mcpServers` shape of Claude Desktop and Cursor: `{ name:
   * { command, args?, env?, cwd? } }` for a process speaking stdio, `{ name: { url, headers? } }` for Streamable
   * HTTP. Connected before `ready`; one that does not start is reported (`error`) and left out.
   */
  mcpServers?: McpServers;
  /** Largest accepted frame in bytes (default 1 MiB); larger ones get FRAME_TOO_LARGE, 8× larger close with 1009. */
  maxFrameBytes?: number;
  /** How often streamed text is persisted while it streams, in milliseconds (default 200); one batch for all answers. */
  persistIntervalMs?: number;
  /**
   * The shortest time between two `CPP_STREAM_CHUNK`s of one answer, in milliseconds (default 30; 0: one chunk per
   * model delta). Text arriving sooner waits, merged, at most this long; an answer's first text never waits.
   */
  chunkIntervalMs?: number;
  /**
   * How long the summary of what a model's window leaves out (`contextStrategy: 'summarize'`) may take, in
   * milliseconds (default 30 000; 0: no limit): a summariser that has not answered by then is aborted, and the answer reads the
   * branch without the summary, as when it fails (docs/PROTOCOL.md §28.5).
   */
  summaryTimeoutMs?: number;
  /** A directory of static files (the web UI) served at `/` on the same port. */
  staticDir?: string;
  /** How often each connection is pinged, in milliseconds (default 30 000; 0: never); one that misses a pong is dropped. */
  heartbeatIntervalMs?: number;
  /**
   * Frames of at least this many bytes (default 65 536) go compressed, with permessage-deflate, to clients that offer
   * it (browsers do): a full sync of a large thread travels in a quarter to a twentieth of its bytes, while chunks and
   * patches go as they are. 0: permessage-deflate is not negotiated. What it costs: docs/PROTOCOL.md §2.5.
   */
  compressionThresholdBytes?: number;
  /**
   * How long a peer has to answer the server's close frame, in milliseconds (default 1000), before its connection is
   * dropped: a peer closed for reading too slowly or not authenticating would otherwise hold its buffers meanwhile.
   */
  closeHandshakeMs?: number;
  /** When a slow reader's chunks are merged (soft) and when it is closed with 4429 (hard); see docs/PROTOCOL.md. */
  backpressure?: Partial<BackpressureLimits>;
  /**
   * The other servers sharing `store` (see docs/cluster.md), e.g. a `RedisClusterTransport`. Default: none, this
   * server is alone. Closed by whoever created it, after the server.
   */
  cluster?: ClusterTransport;
  /** Lock lifetime, recovery sweep and forwarding timeout of cluster mode. */
  clusterTimings?: Partial<ClusterTimings>;
}

/** Facts about an operation a connection carried out, for the notification events. */
export interface OperationEvent {
  connectionId: string;
  identity: Identity;
  frame: ClientFrame;
}

export interface ConnectionEvent {
  connectionId: string;
  identity: Identity;
}

export interface CPPServerEvents {
  /**
   * A pivot: listeners drive it with `context.abortActiveStream()` and `context.spawnSiblingStream()`; what they
   * leave undone is done once they settle, and one that throws refuses the pivot (see `PivotContext`).
   */
  pivot: [context: PivotContext];
  /**
   * Hooks: an operation that changes a thread, its checks passed and none of its steps run. Each listener is awaited
   * in turn, in the order they were added (`once` ones run once); one that throws refuses the operation, which then
   * changes nothing, and the client gets the code of a thrown `CPPError`, else INTERNAL (docs/PROTOCOL.md §11.6).
   * An edit is a prompt with a `parentNodeId` (§24.2).
   */
  beforePrompt: [context: OperationContext<'CPP_PROMPT'>];
  beforeRegenerate: [context: OperationContext<'CPP_REGENERATE'>];
  beforeContinue: [context: OperationContext<'CPP_CONTINUE'>];
  beforeStop: [context: OperationContext<'CPP_STREAM_STOP'>];
  beforeAnchor: [context: OperationContext<'CPP_ANCHOR_HEAD'>];
  beforeDeleteBranch: [context: OperationContext<'CPP_BRANCH_DELETE'>];
  beforeRename: [context: OperationContext<'CPP_THREAD_RENAME'>];
  beforeDeleteThread: [context: OperationContext<'CPP_THREAD_DELETE'>];
  /** Notifications: an operation a connection carried out, once its answer is sent. */
  prompt: [event: OperationEvent];
  anchor: [event: OperationEvent];
  stop: [event: OperationEvent];
  regenerate: [event: OperationEvent];
  continue: [event: OperationEvent];
  deleteBranch: [event: OperationEvent];
  connection: [event: ConnectionEvent];
  /** A connection proved its did:key (docs/PROTOCOL.md §23.2); it acts as `identity` from now on. */
  authenticated: [event: ConnectionEvent];
  disconnect: [event: ConnectionEvent];
  /** A failure no client frame could report (emitted only when someone listens). */
  error: [error: unknown];
}

/** The hook event of each operation that has hooks. */
const HOOKS = {
  CPP_PROMPT: 'beforePrompt',
  CPP_REGENERATE: 'beforeRegenerate',
  CPP_CONTINUE: 'beforeContinue',
  CPP_STREAM_STOP: 'beforeStop',
  CPP_ANCHOR_HEAD: 'beforeAnchor',
  CPP_BRANCH_DELETE: 'beforeDeleteBranch',
  CPP_THREAD_RENAME: 'beforeRename',
  CPP_THREAD_DELETE: 'beforeDeleteThread',
} as const satisfies Record<HookedFrameType, keyof CPPServerEvents>;

/**
 * A third fewer frames than tokens for a 50 tokens/s answer (a half at 40 ms, a quarter at 100 tokens/s) while no
 * text waits more than 30 ms: within the 50 ms a reader does not notice, with room left for a busy event loop.
 */
export const DEFAULT_CHUNK_INTERVAL_MS = 30;

/** Syncs of threads past a few dozen nodes; never a chunk, a patch or any other frame of a conversation's pace. */
const DEFAULT_COMPRESSION_THRESHOLD_BYTES = 64 * 1024;
export const DEFAULT_PERSIST_INTERVAL_MS = 200;
const HEARTBEAT_INTERVAL_MS = 30_000;
const CLOSE_HANDSHAKE_MS = 1000;

const NOTIFIED: Partial<
  Record<ClientFrame['type'], 'prompt' | 'anchor' | 'stop' | 'regenerate' | 'continue' | 'deleteBranch'>
> = {
  CPP_PROMPT: 'prompt',
  CPP_ANCHOR_HEAD: 'anchor',
  CPP_STREAM_STOP: 'stop',
  CPP_REGENERATE: 'regenerate',
  CPP_CONTINUE: 'continue',
  CPP_BRANCH_DELETE: 'deleteBranch',
};

/**
 * A CPP server: `new CPPServer({ port })` listens at once on /v1/cpp/session; `await server.ready` before use.
 * Without a 'pivot' listener it runs the default pivot of spec §4.
 */
export class CPPServer extends EventEmitter<CPPServerEvents> {
  /** Settles when crash recovery is done and the server accepts connections. */
  readonly ready: Promise<void>;
  /** The HTTP server of the upgrades: undefined with `noServer`. */
  private readonly httpServer: HttpServer | undefined;
  /** The same one when this server made it (and listens), undefined when it is the application's. */
  private readonly ownHttpServer: HttpServer | undefined;
  private readonly ownsStore: boolean;
  /** Connections subscribed to their identity's thread list; the store tells it what changed. */
  private readonly threadList: ThreadListFeed;
  private readonly store: ConversationStore;
  private readonly models: ModelCatalog;
  private readonly registry: ThreadRegistry;
  private readonly persister: StreamPersister;
  private readonly tools: ToolRegistry;
  /** The MCP servers' sessions, once connected. */
  private mcp: McpTools | undefined;
  private readonly access: AccessControl;
  private readonly attachments: Attachments;
  /** The other servers sharing the store; undefined when this one is alone (the default). */
  private readonly cluster: ClusterCoordinator | undefined;
  private readonly observers: Observers;
  /** What GET /metrics serves (undefined when metrics are off): serve it yourself when attached to your server. */
  readonly metricsRegistry: Registry | undefined;
  private readonly storeReachable: ReadinessCheck;
  private started = false;
  /** Each open connection, with what its 'connection' event said (its 'disconnect' says the same). */
  private readonly sessions = new Map<ConnectionSession, ConnectionEvent>();
  private transport: WsTransport | undefined;
  /** How a connection is admitted and served, whoever upgraded it: set once the server has started. */
  private hosting: Hosting<Admission> | undefined;
  private closing: Promise<void> | undefined;
  /** Set while shutdown waits for the connections to close. */
  private allSessionsClosed: (() => void) | undefined;

  constructor(private readonly options: CPPServerOptions = {}) {
    super();
    ({ observers: this.observers, metricsRegistry: this.metricsRegistry } = createObservability(options, {
      connections: () => this.sessions.size,
      threads: () => this.registry.size,
      bufferedBytes: () => [...this.sessions.keys()].reduce((sum, session) => sum + session.bufferedBytes, 0),
    }));
    this.models = modelCatalogOf(options);
    this.ownsStore = options.store === undefined;
    const store = options.store ?? new MemoryStore();
    const relayedBy = options.cluster && !options.cluster.solitary ? options.cluster : undefined;
    this.threadList = new ThreadListFeed(relayedBy && listRelayOf(relayedBy));
    this.store = new ListFeedingStore(new ObservedStore(store, this.observers), this.threadList, (error, threadId) =>
      this.reportError(error, { threadId }, 'store'),
    );
    // Probes go to the store itself: they are not store operations to time.
    this.storeReachable = storeReachable(store);
    const timings = { ...DEFAULT_CLUSTER_TIMINGS, ...options.clusterTimings };
    const clustered = options.cluster && !options.cluster.solitary ? options.cluster : undefined;
    this.cluster =
      clustered &&
      new ClusterCoordinator(
        clustered,
        this.store,
        timings,
        (error) => this.reportError(error, {}, 'cluster'),
        () => this.observers.serviceReachable('cluster'),
      );
    this.persister = new StreamPersister(
      this.store,
      options.persistIntervalMs ?? DEFAULT_PERSIST_INTERVAL_MS,
      (error) => this.reportError(error, {}, 'store'),
    );
    this.tools = toolRegistryOf(options, this.models);
    this.registry = new ThreadRegistry(
      this.store,
      {
        models: this.models,
        chunkIntervalMs: options.chunkIntervalMs ?? DEFAULT_CHUNK_INTERVAL_MS,
        ...(options.summaryTimeoutMs === undefined ? {} : { summaryTimeoutMs: options.summaryTimeoutMs }),
        persister: this.persister,
        tools: this.tools,
        observer: this.observers,
        // The access rules are made with the registry they guard; the engines use their limits once they exist.
        limits: {
          checkPrompt: (graph, userPrompt, newNodeId) => this.access.threads.checkPrompt(graph, userPrompt, newNodeId),
          checkRoom: (graph, newNodeId, count) => this.access.threads.checkRoom(graph, newNodeId, count),
          checkContinue: (graph, nodeId) => this.access.threads.checkContinue(graph, nodeId),
        },
        admitGeneration: (requester) => this.access.generations.admit(requester),
        pivotListeners: (context) => this.runHooks('pivot', context),
        runHooks: (context) => this.runHooks(HOOKS[context.type], context),
        onBackgroundError: (error, threadId) => this.reportError(error, { threadId }, 'store'),
      },
      this.cluster ?? new SolitaryLinks(this.store),
    );
    this.access = new AccessControl(options, this.registry, this.store, (identity, connectionId) =>
      this.emit('authenticated', { connectionId, identity }),
    );
    this.attachments = new Attachments(options.attachments ?? {}, {
      store: this.store,
      allowedOrigins: options.allowedOrigins ?? ['*'],
      mayRead: (threadId, identity) => this.access.threads.mayRead(threadId, identity),
      onError: (error) => this.reportError(error),
    });
    if (options.noServer && (options.server || options.port !== undefined))
      throw new Error('Give the server `noServer`, or `port` or `server`, not both');
    if (options.server === undefined && !options.noServer) {
      const routes = {
        staticDir: options.staticDir,
        metrics: this.metricsRegistry,
        readiness: () => this.readiness(),
        attachments: (request: IncomingMessage, response: ServerResponse, path: string) =>
          this.attachments.handle(request, response, path),
        shares: (request: IncomingMessage, response: ServerResponse, path: string) =>
          this.access.shareLinks.handle(request, response, path),
      };
      const httpOptions = { tls: options.tls, handshakeTimeoutMs: this.access.limits.handshakeTimeoutMs };
      this.ownHttpServer = createHttpServer(httpOptions, createHttpHandler(routes));
      this.ownHttpServer.on('connection', (socket: Socket) => this.access.admitSocket(socket));
    }
    this.httpServer = this.ownHttpServer ?? options.server;
    this.ready = this.start();
    this.ready.catch(() => undefined);
  }

  /** The port listened on, once `ready`. */
  get port(): number {
    const address = this.httpServer?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the server is not listening');
    return address.port;
  }

  /** The WebSocket URL of the session endpoint, once `ready`. */
  get url(): string {
    const host = this.options.host && !['0.0.0.0', '::'].includes(this.options.host) ? this.options.host : 'localhost';
    return `${this.options.tls ? 'wss' : 'ws'}://${host.includes(':') ? `[${host}]` : host}:${this.port}${CPP_SESSION_PATH}`;
  }

  /**
   * Serves a WebSocket the application's own server upgraded (Fastify's `@fastify/websocket`, a `ws` server with
   * `noServer`, …), with the request of its upgrade: the request's URL and headers, and its socket's address, are
   * checked as an upgrade of this server's own is (Host, Origin, connections per address, the identity and its
   * proof; docs/PROTOCOL.md §18.1), and a refusal closes the WebSocket with 4000 + the HTTP status it would have had.
   * The WebSocket must have selected the subprotocol `cpp-v1.0.0` (ws: `handleProtocols`), else it is closed with
   * 4400. Frames it receives before the checks are done wait for them. Before `ready` it waits for it; after `close`
   * it is closed with 1001.
   */
  accept(webSocket: WebSocket, request: IncomingMessage): void {
    if (this.transport) return this.transport.accept(webSocket, request);
    // Not yet started: held unread until the transport exists (or the server failed to start).
    webSocket.pause();
    this.ready.then(
      () => {
        webSocket.resume();
        this.accept(webSocket, request);
      },
      () => webSocket.terminate(),
    );
  }

  /**
   * Serves a WebSocket of another library (uWebSockets.js, …) that the application's server upgraded, with the
   * request of its upgrade, checked as `accept` checks it: resolves with the handlers the application calls with each
   * message (`onMessage(data, byteLength)`) and once it closes (`onClose()`), or `undefined` when it was refused and
   * closed. Frames that arrive before it resolves are the application's to hold and hand over then. Heartbeats and
   * the message timeout are the application's library's; `socket.limitMessageBytes` is called with the limits to
   * apply (a library that cannot limit one connection leaves them to the session, which refuses a larger frame once
   * read). With a `ws` WebSocket, `accept` does all of this.
   */
  async open(socket: HostedSocket, request: IncomingMessage): Promise<SocketHandlers | undefined> {
    await this.ready;
    if (!this.hosting) throw new Error('the server has not started');
    return openHosted(socket, request, this.hosting);
  }

  /**
   * Answers a request to the attachment endpoints (docs/PROTOCOL.md §27) for an application that serves HTTP itself
   * (`server` or `noServer`); false, leaving the request alone, when its path is not theirs.
   */
  handleAttachmentRequest(request: IncomingMessage, response: ServerResponse): boolean {
    return this.attachments.handle(request, response, new URL(request.url ?? '/', 'http://localhost').pathname);
  }

  /**
   * Answers a request for a read-only share link's page or its files (docs/PROTOCOL.md §29.10), for an application
   * that serves HTTP itself; false, leaving the request alone, when its path is not theirs.
   */
  handleShareRequest(request: IncomingMessage, response: ServerResponse): boolean {
    return this.access.shareLinks.handle(request, response, new URL(request.url ?? '/', 'http://localhost').pathname);
  }

  get connectionCount(): number {
    return this.sessions.size;
  }

  /** Whether the server can serve now (GET /readyz): started, not shutting down, its store and its cluster answering. */
  readiness(): Promise<ReadinessReport> {
    const serving: ReadinessCheck = async () => {
      if (!this.started) throw new Error('starting: recovering answers a crash interrupted');
      if (this.closing) throw new Error('shutting down');
    };
    const checks: Record<string, ReadinessCheck> = { server: serving, store: this.storeReachable };
    const { cluster } = this;
    if (cluster) checks.cluster = () => cluster.check();
    return checkReadiness(checks, (check, error) => this.observers.readinessFailed(check, error));
  }

  /** Halts every running answer (kept as `interrupted`), closes every connection with 1001, then stops. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async start(): Promise<void> {
    // Alone, every answer left streaming is a crash's; in a cluster only those whose server's lock expired are.
    if (this.cluster) await this.cluster.start(this.registry);
    else await this.store.interruptStreamingNodes(Date.now());
    const { mcpServers } = this.options;
    if (mcpServers && Object.keys(mcpServers).length > 0) {
      // Loaded only by a server that has MCP servers: the SDK is most of a second to import.
      const { McpTools } = await import('./tools/mcp-tools.js');
      this.mcp = await McpTools.connect(mcpServers, this.tools, (error) => this.reportError(error));
    }
    const maxFrameBytes = this.options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    // One for every session: a connection keeps only what is its own.
    const sessionDependencies: SessionDependencies = {
      access: this.access.threads,
      members: this.access.members,
      invites: this.access.invites,
      shareLinks: this.access.shareLinks,
      threadList: this.threadList,
      store: this.store,
      models: this.models,
      attachments: this.attachments,
      maxFrameBytes,
      observers: this.observers,
      backpressure: { ...DEFAULT_BACKPRESSURE_LIMITS, ...this.options.backpressure },
      onFrameHandled: (session, frame) => this.notify(session, frame),
      onInternalError: (error, session) => this.reportError(error, { connectionId: session.id }),
      onClosed: (session) => this.sessionClosed(session),
    };
    this.hosting = {
      identify: (request) => this.access.admit(request),
      connect: (socket, admission) =>
        this.openSession(new ConnectionSession(socket, this.access.guard(admission), sessionDependencies)),
      shutDown: () => this.closing !== undefined,
    };
    this.transport = createWsTransport<Admission>(this.httpServer, {
      maxPayload: maxFrameBytes * 8,
      refuseOtherPaths: this.ownHttpServer !== undefined,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
      closeHandshakeMs: this.closeHandshakeMs,
      messageTimeoutMs: this.access.limits.messageTimeoutMs,
      compressionThresholdBytes: this.options.compressionThresholdBytes ?? DEFAULT_COMPRESSION_THRESHOLD_BYTES,
      identify: this.hosting.identify,
      connect: this.hosting.connect,
    });
    const httpServer = this.ownHttpServer;
    if (httpServer) {
      await new Promise<void>((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(this.options.port ?? 8080, this.options.host, () => {
          httpServer.off('error', reject);
          resolve();
        });
      });
    }
    this.started = true;
  }

  private openSession(session: ConnectionSession): ConnectionSession {
    const event = { connectionId: session.id, identity: session.identity };
    this.sessions.set(session, event);
    this.observers.connectionOpened(session);
    this.emit('connection', event);
    return session;
  }

  private sessionClosed(session: ConnectionSession): void {
    const event = this.sessions.get(session);
    if (!event) return;
    this.sessions.delete(session);
    this.observers.connectionClosed(session);
    this.emit('disconnect', event);
    if (this.sessions.size === 0) this.allSessionsClosed?.();
  }

  private get closeHandshakeMs(): number {
    return this.options.closeHandshakeMs ?? CLOSE_HANDSHAKE_MS;
  }

  /**
   * The listeners of a hook, one after the other, each awaited. Their raw form: a `once` listener is one that
   * removes itself when called (`listeners()` gives the function it wraps, which would run on every operation).
   */
  private async runHooks(event: 'pivot' | (typeof HOOKS)[HookedFrameType], context: unknown): Promise<void> {
    for (const listener of this.rawListeners(event))
      await (listener as (context: unknown) => unknown).call(this, context);
  }

  private notify(session: ConnectionSession, frame: ClientFrame): void {
    const event = NOTIFIED[frame.type];
    if (event) this.emit(event, { connectionId: session.id, identity: session.identity, frame });
  }

  /**
   * `service`: what the failing operation needed. When that could not be reached, the failure is part of its outage,
   * which the observers hear of as such (the log tells an outage once, not each failure).
   */
  private reportError(error: unknown, context: ErrorContext = {}, service?: DependedService): void {
    if (service && isUnreachable(error)) this.observers.serviceUnreachable(service, error);
    else this.observers.serverError(error, context);
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  /** Closes with 1001 and waits, at most the close handshake's time, for the last connection to close; then drops the rest. */
  private async closeSessions(): Promise<void> {
    if (this.sessions.size === 0) return;
    const closed = new Promise<void>((resolve) => (this.allSessionsClosed = resolve));
    for (const session of this.sessions.keys()) session.close(CloseCode.GOING_AWAY, 'server shutting down');
    const timeout = new AbortController();
    await Promise.race([
      closed,
      sleep(this.closeHandshakeMs, undefined, { signal: timeout.signal }).catch(() => undefined),
    ]);
    timeout.abort();
    this.allSessionsClosed = undefined;
    for (const session of this.sessions.keys()) session.terminate();
  }

  private async shutdown(): Promise<void> {
    await this.ready.catch(() => undefined);
    this.transport?.close();
    // Stop accepting connections at once; the promise settles once the open ones are gone.
    const httpServer = this.ownHttpServer;
    const stoppedListening = httpServer && new Promise<void>((resolve) => httpServer.close(() => resolve()));
    await Promise.all(
      this.registry.all().map((engine) => engine.shutdown().catch((error: unknown) => this.reportError(error))),
    );
    // Every answer was just committed with its text: a batch would have nothing to add.
    this.persister.stop();
    await this.closeSessions();
    if (httpServer) {
      httpServer.closeAllConnections();
      await stoppedListening;
    }
    await this.mcp?.close();
    await this.cluster?.close();
    if (this.ownsStore) await this.store.close();
  }
}

function toolRegistryOf({ tools, toolLimits }: CPPServerOptions, models: ModelCatalog): ToolRegistry {
  const demo = models.providers().some((provider) => provider instanceof DemoToolsProvider) ? demoTools() : {};
  return new ToolRegistry({ ...demo, ...tools }, { ...DEFAULT_TOOL_LIMITS, ...toolLimits });
}

function modelCatalogOf({ model, models, defaultModel }: CPPServerOptions): ModelCatalog {
  if (model && models) throw new Error('Give the server `model` or `models`, not both');
  return new ModelCatalog(models ?? (model ? [{ provider: model }] : demoModels()), defaultModel);
}

/**
 * The thread list's relay over the cluster's transport: each identity's list frames on a channel of their own,
 * beside the threads' (PROTOCOL.md §7.11; docs/cluster.md).
 */
function listRelayOf(transport: ClusterTransport): ListRelay {
  const channel = (ownerDid: string) => `threads-of:${ownerDid}`;
  return {
    publish: (ownerDid, frame) => transport.publish(channel(ownerDid), { frame }),
    subscribe: (ownerDid, deliver) =>
      transport.subscribe(channel(ownerDid), (message) => {
        if ('frame' in message) deliver(message.frame);
      }),
  };
}
