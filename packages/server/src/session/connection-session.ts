import {
  CPPError,
  CloseCode,
  ErrorCode,
  SEARCH_RESULTS_DEFAULT,
  THREAD_LIST_DEFAULT_LIMIT,
  decodeClientFrame,
  encodeServerFrame,
  type ClientFrame,
  type ClientPayload,
  type ErrorCode as ErrorCodeType,
  searchTerms,
} from '@promethea/cpp-protocol';
import type { Attachments } from '../attachments/attachments.js';
import type { ConnectionGuard } from '../auth/connection-guard.js';
import type { ThreadAccess, ThreadRight } from '../auth/thread-access.js';
import type { ShareLinks } from '../auth/share-links.js';
import type { ThreadInvites } from '../auth/thread-invites.js';
import type { ThreadMembers } from '../auth/thread-members.js';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ConversationStore } from '../store/conversation-store.js';
import type { Identity } from '../engine/identity.js';
import { SerialQueue } from '../engine/serial-queue.js';
import type { Subscriber } from '../engine/subscriber.js';
import type { ThreadEngine } from '../engine/thread-engine.js';
import { isThreadFrame, threadOf } from '../engine/thread-frame.js';
import { readThreadListCursor, threadListCursor } from '../threads/thread-list-cursor.js';
import type { ThreadListFeed } from '../threads/thread-list-feed.js';
import type { CPPSocket, SocketHandlers } from '../transport/cpp-socket.js';
import { BackpressureQueue, type BackpressureLimits, type ChunkPayload } from './backpressure.js';
import type { SessionObserver } from './session-observer.js';

export interface SessionDependencies {
  store: ConversationStore;
  /** What CPP_MODEL_LIST lists. */
  models: ModelCatalog;
  /** Hands out tickets to the attachment endpoints. */
  attachments: Pick<Attachments, 'ticket'>;
  /** Whose threads it may act on, and how much. */
  access: ThreadAccess;
  /** Who shares which thread. */
  members: ThreadMembers;
  /** The invites to shared threads. */
  invites: ThreadInvites;
  /** The read-only share links of threads. */
  shareLinks: ShareLinks;
  /** The connections subscribed to their identity's thread list. */
  threadList: ThreadListFeed;
  maxFrameBytes: number;
  backpressure: BackpressureLimits;
  observers: SessionObserver;
  /** A frame was handled; for the server's notification events. */
  onFrameHandled(session: ConnectionSession, frame: ClientFrame): void;
  /** A failure the client only sees as INTERNAL. */
  onInternalError(error: unknown, session: ConnectionSession): void;
  /** The connection is gone: its socket closed, its threads left. */
  onClosed(session: ConnectionSession): void;
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
  /**
   * The threads this connection is subscribed to. This, and `applying`, exist only while they hold something: what an
   * idle connection holds is multiplied by every connection a server keeps open (issue 20).
   */
  private threads: Set<ThreadEngine> | undefined;
  private closed = false;
  private readonly outbound: BackpressureQueue;
  /**
   * The connection's frames take their turn here, in receipt order, from the identity and access checks until they
   * are queued on their thread: a frame right behind a CPP_THREAD_OPEN that creates the thread finds it, whatever
   * the store's latency (docs/PROTOCOL.md §15.1). Only the routing is serial; threads then work independently.
   */
  private readonly receipt = new SerialQueue();
  /** The frames queued on their threads and not yet applied: a thread list waits for those sent before it. */
  private applying: Set<Promise<void>> | undefined;
  /** The DID whose thread list this connection is subscribed to, if it is. */
  private listSubscription: string | undefined;

  constructor(
    private readonly socket: CPPSocket,
    /** This connection's identity, authentication and allowances. */
    private readonly guard: ConnectionGuard,
    /** Shared by every session of the server. */
    private readonly dependencies: SessionDependencies,
  ) {
    this.outbound = new BackpressureQueue(socket, dependencies.backpressure, () =>
      this.close(CloseCode.TOO_MANY_REQUESTS, 'the client reads too slowly'),
    );
    guard.attach(this);
  }

  /** Who acts through this connection: claimed or anonymous, then proven once a proof is accepted. */
  get identity(): Identity {
    return this.guard.identity;
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
    if (!this.guard.admitMessage()) return;
    if (typeof data !== 'string')
      return this.sendError(ErrorCode.BAD_FRAME, 'binary frames are not part of CPP; send JSON text frames', {});
    if (byteLength > this.dependencies.maxFrameBytes) {
      return this.sendError(
        ErrorCode.FRAME_TOO_LARGE,
        `frame is ${byteLength} bytes; the limit is ${this.dependencies.maxFrameBytes}${importHint(data)}`,
        {},
      );
    }
    const decoded = decodeClientFrame(data);
    if (!decoded.ok) {
      const { code, message, refId, refType } = decoded;
      return this.sendError(code, message, { refId, refType });
    }
    const frame = decoded.frame;
    this.dependencies.observers.frameReceived(this, frame);
    this.receipt.run(() => this.route(frame)).catch((error: unknown) => this.fail(error, frame));
  }

  onClose(): void {
    this.closed = true;
    this.guard.detach();
    for (const engine of this.threads ?? []) engine.unsubscribe(this);
    this.threads = undefined;
    void this.subscribeToList(false);
    this.dependencies.onClosed(this);
  }

  /** Checks the frame and hands it to its thread's queue (or answers it), without waiting for the thread's turn. */
  private async route(frame: ClientFrame): Promise<void> {
    const { guard } = this;
    const { access } = this.dependencies;
    if (frame.type === 'CPP_AUTH_PROOF') {
      guard.authenticate(frame);
      return this.answered(frame, Promise.resolve());
    }
    guard.requireIdentity();
    if (isThreadFrame(frame)) {
      // Renaming is the owner's; every other thread frame changes the tree, a writer's right.
      const right = frame.type === 'CPP_THREAD_RENAME' ? 'own' : 'write';
      return this.answered(frame, (await this.thread(threadOf(frame), right)).apply(frame, this.identity, this));
    }
    switch (frame.type) {
      case 'CPP_THREAD_OPEN': {
        access.checkSync(this.identity, this.id);
        const engine = await this.subscribe(
          () => access.open(frame.payload.threadId, this.identity),
          frame.payload.patches,
        );
        return this.answered(frame, engine.sync(this, frame.payload.presence));
      }
      case 'CPP_TYPING': {
        const engine = await this.thread(frame.payload.threadId, 'write');
        return engine.typing(this, frame.payload.typing);
      }
      case 'CPP_THREAD_CLOSE': {
        const engine = await access.thread(frame.payload.threadId, this.identity);
        this.forget(engine);
        return this.answered(frame, engine.leave(this));
      }
      case 'CPP_THREAD_LIST':
        return this.inTurn(frame, () => this.listThreads(frame.payload));
      case 'CPP_MODEL_LIST': {
        const { models } = this.dependencies;
        return this.send(encodeServerFrame('CPP_MODELS', { models: models.list(), defaultModel: models.defaultId }));
      }
      case 'CPP_ATTACHMENT_TICKET_REQUEST':
        return this.send(
          encodeServerFrame('CPP_ATTACHMENT_TICKET', this.dependencies.attachments.ticket(this.identity)),
        );
      case 'CPP_SYNC_REQUEST':
        access.checkSync(this.identity, this.id);
        return this.answered(frame, (await this.thread(frame.payload.threadId)).sync(this));
      case 'CPP_THREAD_DELETE': {
        const engine = await access.existing(frame.payload.threadId, this.identity, 'own');
        return this.answered(frame, this.deleteThread(frame, engine));
      }
      case 'CPP_THREAD_SEARCH':
        access.checkSearch(this.identity, this.id);
        return this.inTurn(frame, async () => {
          const { query, limit = SEARCH_RESULTS_DEFAULT } = frame.payload;
          const hits = await this.dependencies.store.searchThreads(this.identity.did, searchTerms(query), limit);
          this.send(encodeServerFrame('CPP_SEARCH_RESULTS', { query, hits }));
        });
      case 'CPP_THREAD_IMPORT':
        return this.inTurn(frame, async () => {
          const threads = await access.importThreads(this.identity, frame.payload.format, frame.payload.document);
          this.send(encodeServerFrame('CPP_THREADS_IMPORTED', { threads }));
        });
      case 'CPP_MEMBER_ADD':
      case 'CPP_MEMBER_REMOVE':
      case 'CPP_MEMBER_LIST':
        return this.inTurn(frame, () => this.share(frame));
      case 'CPP_INVITE_CREATE':
      case 'CPP_INVITE_LIST':
      case 'CPP_INVITE_REVOKE':
      case 'CPP_INVITE_ACCEPT':
        return this.inTurn(frame, () => this.invite(frame));
      case 'CPP_SHARE_LINK_CREATE':
      case 'CPP_SHARE_LINK_LIST':
      case 'CPP_SHARE_LINK_REVOKE':
        return this.inTurn(frame, () => this.shareLink(frame));
    }
  }

  /** The member frames (docs/PROTOCOL.md §29.3), each answered with CPP_MEMBERS, or a leave with CPP_THREAD_REVOKED. */
  private async share(frame: Extract<ClientFrame, { type: `CPP_MEMBER_${string}` }>): Promise<void> {
    const { members } = this.dependencies;
    const { threadId } = frame.payload;
    switch (frame.type) {
      case 'CPP_MEMBER_ADD': {
        const { did, role } = frame.payload;
        return this.send(encodeServerFrame('CPP_MEMBERS', await members.add(threadId, did, role, this.identity)));
      }
      case 'CPP_MEMBER_LIST':
        return this.send(encodeServerFrame('CPP_MEMBERS', await members.list(threadId, this.identity)));
      case 'CPP_MEMBER_REMOVE': {
        const removal = await members.remove(threadId, frame.payload.did, this.identity);
        if (!removal.left) return this.send(encodeServerFrame('CPP_MEMBERS', removal.members));
        // A connection subscribed to the thread was told by the revocation; this one is told here if it was not.
        const told = this.threads?.has(removal.engine) === true;
        this.forget(removal.engine);
        if (!told) {
          const revoked = { threadId, did: this.identity.did, reason: 'left' as const };
          this.send(encodeServerFrame('CPP_THREAD_REVOKED', revoked));
        }
      }
    }
  }

  /**
   * Answers `frame` once `applied` settles. The handlers go on the operation's own promise as it is queued, so that
   * a refusal is sent before the thread applies its next frame (they run before the queue's next turn starts).
   */
  private answered(frame: ClientFrame, applied: Promise<void>): void {
    (this.applying ??= new Set()).add(applied);
    applied.then(
      () => {
        this.settled(applied);
        this.dependencies.onFrameHandled(this, frame);
      },
      (error: unknown) => {
        this.settled(applied);
        this.fail(error, frame);
      },
    );
  }

  /** A frame's operation settled: it is no longer one a thread list waits for. */
  private settled(operation: Promise<void>): void {
    this.applying?.delete(operation);
    if (this.applying?.size === 0) this.applying = undefined;
  }

  /**
   * Answers a frame that no thread queues (a list, a search, an import) once the frames sent before it are applied;
   * the frames behind it wait, so that it sees and is seen as by a client that waits for each answer.
   */
  private inTurn(frame: ClientFrame, work: () => Promise<void>): Promise<void> {
    const done = Promise.allSettled([...(this.applying ?? [])]).then(work);
    this.answered(frame, done);
    return done.catch(() => undefined);
  }

  /**
   * One page of the list (docs/PROTOCOL.md §6.3). A subscription starts before the page is read, so that no change
   * falls between the two; one more thread than asked for is read to tell whether there are more.
   */
  private async listThreads({
    limit = THREAD_LIST_DEFAULT_LIMIT,
    cursor,
    subscribe,
  }: ClientPayload<'CPP_THREAD_LIST'>) {
    const after = cursor === undefined ? undefined : readThreadListCursor(cursor);
    if (subscribe !== undefined) await this.subscribeToList(subscribe);
    const threads = await this.dependencies.store.listThreads(this.identity.did, { limit: limit + 1, after });
    const more = threads.length > limit;
    if (more) threads.length = limit;
    const last = threads.at(-1);
    const nextCursor = more && last ? threadListCursor(last) : null;
    this.send(encodeServerFrame('CPP_THREADS', { threads, nextCursor }));
  }

  private async subscribeToList(subscribe: boolean): Promise<void> {
    const { threadList } = this.dependencies;
    if (this.listSubscription !== undefined) threadList.unsubscribe(this.listSubscription, this);
    this.listSubscription = subscribe ? this.identity.did : undefined;
    if (this.listSubscription !== undefined) await threadList.subscribe(this.listSubscription, this);
  }

  /**
   * A subscriber hears of the deletion from the thread; this connection is told here when it was not subscribed, or
   * when the thread is already gone (a retry).
   */
  private async deleteThread(
    frame: Extract<ClientFrame, { type: 'CPP_THREAD_DELETE' }>,
    engine: ThreadEngine | undefined,
  ): Promise<void> {
    const { threadId } = frame.payload;
    const told = engine !== undefined && this.threads?.has(engine) === true;
    if (engine) {
      await engine.delete(frame, this.identity);
      this.forget(engine);
    }
    if (!told) this.send(encodeServerFrame('CPP_THREAD_DELETED', { threadId }));
  }

  /** The invite frames (docs/PROTOCOL.md §29.7): the owner's CPP_INVITE and CPP_INVITES, a joiner's CPP_MEMBERS. */
  private async invite(frame: Extract<ClientFrame, { type: `CPP_INVITE_${string}` }>): Promise<void> {
    const { invites } = this.dependencies;
    switch (frame.type) {
      case 'CPP_INVITE_CREATE':
        return this.send(encodeServerFrame('CPP_INVITE', await invites.create(frame.payload, this.identity)));
      case 'CPP_INVITE_LIST':
        return this.send(encodeServerFrame('CPP_INVITES', await invites.list(frame.payload.threadId, this.identity)));
      case 'CPP_INVITE_REVOKE': {
        const { threadId, inviteId } = frame.payload;
        return this.send(encodeServerFrame('CPP_INVITES', await invites.revoke(threadId, inviteId, this.identity)));
      }
      case 'CPP_INVITE_ACCEPT':
        return this.send(encodeServerFrame('CPP_MEMBERS', await invites.accept(frame.payload.token, this.identity)));
    }
  }

  /** The share link frames (docs/PROTOCOL.md §29.10): the owner's, answered with CPP_SHARE_LINK or CPP_SHARE_LINKS. */
  private async shareLink(frame: Extract<ClientFrame, { type: `CPP_SHARE_LINK_${string}` }>): Promise<void> {
    const { shareLinks } = this.dependencies;
    const { threadId } = frame.payload;
    switch (frame.type) {
      case 'CPP_SHARE_LINK_CREATE': {
        const made = await shareLinks.create(threadId, frame.payload.scope, this.identity);
        return this.send(encodeServerFrame('CPP_SHARE_LINK', made));
      }
      case 'CPP_SHARE_LINK_LIST':
        return this.send(encodeServerFrame('CPP_SHARE_LINKS', await shareLinks.list(threadId, this.identity)));
      case 'CPP_SHARE_LINK_REVOKE': {
        const left = await shareLinks.revoke(threadId, frame.payload.linkId, this.identity);
        return this.send(encodeServerFrame('CPP_SHARE_LINKS', left));
      }
    }
  }

  /** A thread this connection acts on; acting on a thread subscribes to it, so a client of the seed spec alone works. */
  private thread(threadId: string, right: ThreadRight = 'read'): Promise<ThreadEngine> {
    return this.subscribe(() => this.dependencies.access.thread(threadId, this.identity, right));
  }

  /** Looks a thread up and subscribes to it; again when its engine was unloaded between the two. */
  private async subscribe(lookUp: () => Promise<ThreadEngine>, patches?: boolean): Promise<ThreadEngine> {
    for (;;) {
      const engine = await lookUp();
      if (this.closed) throw new Error('connection closed');
      if (!engine.subscribe(this, patches)) continue;
      (this.threads ??= new Set()).add(engine);
      return engine;
    }
  }

  /** Forgets a thread this connection no longer acts on. */
  private forget(engine: ThreadEngine): void {
    this.threads?.delete(engine);
    if (this.threads?.size === 0) this.threads = undefined;
  }

  private fail(error: unknown, frame: ClientFrame): void {
    const reference: ErrorReference = { refType: frame.type, refId: frame.id };
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

/**
 * An import larger than a frame has a way in: the operator's command line, which reads any size in constant
 * memory. The frame is not decoded to learn its type (it is too large to be); its start is looked at.
 */
function importHint(data: string): string {
  return data.slice(0, IMPORT_HINT_PREFIX).includes('"CPP_THREAD_IMPORT"')
    ? "; import a larger file with the server's command line: cpp-server import FILE --did DID"
    : '';
}

/** How much of a frame's start is looked at for its type: an envelope's `type` comes first or near it. */
const IMPORT_HINT_PREFIX = 256;
