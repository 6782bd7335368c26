import {
  CPPError,
  CloseCode,
  ErrorCode,
  decodeClientFrame,
  encodeServerFrame,
  type ClientFrame,
  type ErrorCode as ErrorCodeType,
} from '@promethea/cpp-protocol';
import type { ConnectionGuard } from '../auth/connection-guard.js';
import type { ThreadAccess } from '../auth/thread-access.js';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ConversationStore } from '../store/conversation-store.js';
import type { Identity } from '../engine/identity.js';
import type { Subscriber } from '../engine/subscriber.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import type { Observers } from '../observability/observers.js';
import type { CPPSocket, SocketHandlers } from '../transport/cpp-socket.js';
import { BackpressureQueue, type BackpressureLimits, type ChunkPayload } from './backpressure.js';

export interface SessionDependencies {
  store: ConversationStore;
  /** What CPP_MODEL_LIST lists. */
  models: ModelCatalog;
  /** This connection's identity, authentication and allowances. */
  guard: ConnectionGuard;
  /** Whose threads it may act on, and how much. */
  access: ThreadAccess;
  maxFrameBytes: number;
  backpressure: BackpressureLimits;
  observers: Observers;
  /** A frame was handled; for the server's notification events. */
  onFrameHandled(session: ConnectionSession, frame: ClientFrame): void;
  /** A failure the client only sees as INTERNAL. */
  onInternalError(error: unknown, session: ConnectionSession): void;
}

type ErrorReference = { refId?: string; refType?: string };

let sessionCount = 0;

/**
 * One client connection: decodes its frames at the edge, routes them to the threads they name, subscribes it to
 * those threads, and answers every failure with a CPP_ERROR naming the frame it answers.
 */
export class ConnectionSession implements Subscriber, SocketHandlers {
  readonly id = `conn_${++sessionCount}`;

  get connectionId(): string {
    return this.id;
  }
  private readonly threads = new Set<ThreadEngine>();
  private closed = false;
  private readonly outbound: BackpressureQueue;

  constructor(
    private readonly socket: CPPSocket,
    private readonly dependencies: SessionDependencies,
  ) {
    this.outbound = new BackpressureQueue(socket, dependencies.backpressure, () => this.close(CloseCode.TOO_MANY_REQUESTS, 'the client reads too slowly'));
    dependencies.guard.attach(this);
  }

  /** Who acts through this connection: claimed or anonymous, then proven once a proof is accepted. */
  get identity(): Identity {
    return this.dependencies.guard.identity;
  }

  send(text: string, chunk?: ChunkPayload): void {
    if (this.closed) return;
    this.outbound.send(text, chunk);
    this.dependencies.observers.frameSent(this, text);
  }

  /** Bytes on their way to this client: in the socket's buffer, and waiting behind it. */
  get bufferedBytes(): number {
    return this.socket.bufferedAmount + this.outbound.queuedBytes;
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  terminate(): void {
    this.socket.terminate();
  }

  limitMessageBytes(bytes?: number): void {
    this.socket.limitMessageBytes(bytes);
  }

  onMessage(data: string | Uint8Array, byteLength: number): void {
    if (!this.dependencies.guard.admitMessage()) return;
    if (typeof data !== 'string') return this.sendError(ErrorCode.BAD_FRAME, 'binary frames are not part of CPP; send JSON text frames', {});
    if (byteLength > this.dependencies.maxFrameBytes) {
      return this.sendError(ErrorCode.FRAME_TOO_LARGE, `frame is ${byteLength} bytes; the limit is ${this.dependencies.maxFrameBytes}`, {});
    }
    const decoded = decodeClientFrame(data);
    if (!decoded.ok) {
      const { code, message, refId, refType } = decoded;
      return this.sendError(code, message, { ...(refId === undefined ? {} : { refId }), ...(refType === undefined ? {} : { refType }) });
    }
    const frame = decoded.frame;
    this.dependencies.observers.frameReceived(this, frame);
    this.handle(frame).then(
      () => this.dependencies.onFrameHandled(this, frame),
      (error: unknown) => this.fail(error, frame),
    );
  }

  onClose(): void {
    this.closed = true;
    this.dependencies.guard.detach();
    for (const engine of this.threads) engine.unsubscribe(this);
    this.threads.clear();
  }

  private async handle(frame: ClientFrame): Promise<void> {
    const { guard, access } = this.dependencies;
    if (frame.type === 'CPP_AUTH_PROOF') return guard.authenticate(frame);
    guard.requireIdentity();
    switch (frame.type) {
      case 'CPP_THREAD_OPEN': {
        access.checkSync(this.identity, this.id);
        const engine = this.subscribe(await access.open(frame.payload.threadId, this.identity), frame.payload.patches);
        return engine.sync(this);
      }
      case 'CPP_THREAD_CLOSE': {
        const engine = await access.thread(frame.payload.threadId, this.identity);
        engine.unsubscribe(this);
        this.threads.delete(engine);
        return;
      }
      case 'CPP_THREAD_LIST': {
        const threads = await this.dependencies.store.listThreads(this.identity.did);
        return this.send(encodeServerFrame('CPP_THREADS', { threads }));
      }
      case 'CPP_MODEL_LIST': {
        const { models } = this.dependencies;
        return this.send(encodeServerFrame('CPP_MODELS', { models: models.list(), defaultModel: models.defaultId }));
      }
      case 'CPP_SYNC_REQUEST':
        access.checkSync(this.identity, this.id);
        return (await this.thread(frame.payload.threadId)).sync(this);
      case 'CPP_PROMPT': {
        const { activeThreadId, ...request } = frame.payload;
        const engine = await this.thread(activeThreadId);
        access.checkPrompt(engine, request.userPrompt, request.newNodeId);
        return engine.prompt(request, this);
      }
      case 'CPP_PIVOT_INIT': {
        const { activeThreadId, receivedContentLength, ...request } = frame.payload;
        const engine = await this.thread(activeThreadId);
        access.checkPrompt(engine, request.userPrompt, request.newBranchNodeId);
        return engine.pivot({ ...request, threadId: activeThreadId, receivedContentLength }, this.identity, this);
      }
      case 'CPP_STREAM_STOP': {
        const { activeThreadId, ...request } = frame.payload;
        return (await this.thread(activeThreadId)).stop(request);
      }
      case 'CPP_ANCHOR_HEAD':
        return (await this.thread(frame.payload.activeThreadId)).anchor(frame.payload.targetNodeId, frame.payload.expectedVersion);
    }
  }

  /** A thread this connection acts on; acting on a thread subscribes to it, so a client of the seed spec alone works. */
  private async thread(threadId: string): Promise<ThreadEngine> {
    return this.subscribe(await this.dependencies.access.thread(threadId, this.identity));
  }

  private subscribe(engine: ThreadEngine, patches?: boolean): ThreadEngine {
    if (this.closed) throw new Error('connection closed');
    engine.subscribe(this, patches);
    this.threads.add(engine);
    return engine;
  }

  private fail(error: unknown, frame: ClientFrame): void {
    const reference: ErrorReference = { refType: frame.type, ...(frame.id === undefined ? {} : { refId: frame.id }) };
    if (CPPError.isInstance(error)) return this.sendError(error.code, error.message, reference);
    if (this.closed) return;
    this.dependencies.onInternalError(error, this);
    this.sendError(ErrorCode.INTERNAL, 'the server failed to handle this frame; nothing was changed', reference);
  }

  sendError(code: ErrorCodeType, message: string, reference: ErrorReference): void {
    this.dependencies.observers.errorSent(this, { code, message, ...reference });
    this.send(encodeServerFrame('CPP_ERROR', { code, message, ...reference }));
  }
}
