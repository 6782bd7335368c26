import {
  CPPError,
  encodeServerFrame,
  ErrorCode,
  cutToolCalls,
  getNode,
  setPartText,
  streamingNode,
  streamingNodes,
  type ClientFrame,
  type MessageNode,
  type PresentIdentity,
  type RevokeReason,
  type ServerFrame,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ConversationStore, StoredThread, ThreadRecord } from '../store/conversation-store.js';
import { ThreadAnswer, ThreadGeneration, type AnswerDependencies, type Titling } from './answer.js';
import type { Cut } from './cut.js';
import type { EngineObserver } from './engine-observer.js';
import type { Identity } from './identity.js';
import type { OperationContext } from './operation-context.js';
import { pivot } from './pivot.js';
import type { PivotContext } from './pivot-context.js';
import { CopyCatchUp } from './copy-catch-up.js';
import { continueAnswer, prompt, regenerate } from './prompt.js';
import { applyRemoteFrame } from './remote-frame.js';
import { SerialQueue } from './serial-queue.js';
import { streamState } from './sync-frame-cache.js';
import { stop } from './stop.js';
import { answerToolCall, approveToolCall } from './tool-call-answers.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext, ThreadLimits } from './thread-context.js';
import { ThreadFanout } from './thread-fanout.js';
import { ThreadPresence } from './thread-presence.js';
import type { ThreadFrame } from './thread-frame.js';
import type { LinkedEngine, ThreadLink } from './thread-link.js';
import { anchor, deleteBranch, deleteThread, rename } from './tree-edits.js';

/**
 * How long a frame run on another server waits for that server's change to reach this copy before reading the
 * thread from the store instead: the change is a message sent before the answer, normally milliseconds behind it.
 */
const CATCH_UP_PATIENCE_MS = 1000;

export interface ThreadEngineDependencies extends AnswerDependencies {
  limits: ThreadLimits;
  /** Runs the server's 'pivot' listeners; the engine completes what they leave undone. */
  pivotListeners(context: PivotContext): Promise<void>;
  /** Runs the server's hooks of an operation (see `OperationContext`). */
  runHooks(context: OperationContext): Promise<void>;
  /** The engine has no subscriber and no generation left: it may be unloaded. */
  onIdle(engine: ThreadEngine): void;
}

/**
 * The live state of one thread: its graph, its subscribers and its one generation. Every operation (a module of
 * its own: `pivot.ts`, `prompt.ts`, `stop.ts`, `tree-edits.ts`) runs in the thread's serial queue and plans its
 * change with the pure tree operations; a change is committed to the store in one transaction and applied to the
 * graph before its CPP_GRAPH_PATCH goes out. What is not a change goes out before any commit: CPP_STREAM_HALTED as
 * soon as a stream is cut, and an answer's chunks as they come (`answer.ts`). The operations get the thread's state
 * and its answer (`ThreadContext`) from this class.
 */
export class ThreadEngine implements ThreadContext, LinkedEngine {
  private readonly queue = new SerialQueue();
  /**
   * Subscribers whose CPP_THREAD_CLOSE waits for its turn, each with that close. This, and `catchUp`, are made when
   * first needed: what every open thread holds is multiplied by the threads a server keeps open (issue 20).
   */
  private leaving: Map<Subscriber, object> | undefined;
  private readonly fanout: ThreadFanout;
  /** Made by the first frame another server answers: a server alone never waits for its copy. */
  private catchUp: CopyCatchUp | undefined;
  readonly generation: ThreadGeneration;
  /** The thread's answer, from its start to its end, and every commit of the thread. */
  readonly answer: ThreadAnswer;
  /** Set once the engine went idle and was let go of: the thread is looked up again, never subscribed to here. */
  private unloaded = false;
  /** Who has the thread open, made by the first subscriber (or the first word of another server's). */
  private presence: ThreadPresence | undefined;

  constructor(
    readonly record: ThreadRecord,
    readonly graph: ThreadGraph,
    /** The other servers sharing the store, if any: what they must hear, and where the thread's generation runs. */
    readonly link: ThreadLink,
    /** Shared by every engine of the server. */
    private readonly dependencies: ThreadEngineDependencies,
  ) {
    this.fanout = new ThreadFanout(graph, record, link);
    this.generation = new ThreadGeneration(graph.threadId, link, dependencies.persister, () => this.unloadIfIdle());
    this.answer = new ThreadAnswer(graph, record, link, this.generation, this.fanout, this.queue, dependencies);
  }

  get threadId(): string {
    return this.graph.threadId;
  }

  /** The DID that created the thread. */
  get ownerDid(): string {
    return this.record.ownerDid;
  }

  get store(): ConversationStore {
    return this.dependencies.store;
  }

  get models(): ModelCatalog {
    return this.dependencies.models;
  }

  get limits(): ThreadLimits {
    return this.dependencies.limits;
  }

  get observer(): EngineObserver {
    return this.dependencies.observer;
  }

  /** Nobody listens and the generation is idle (its lock let go): the engine may be unloaded. */
  get idle(): boolean {
    return this.fanout.size === 0 && this.generation.state.name === 'idle';
  }

  // ---- Subscribers ----

  /**
   * Subscribes at once (not in the queue), so that the engine is never unloaded under a frame about to use it. A
   * subscriber already there gets the mode it asks for in its turn, after the frames it sent before; one whose
   * CPP_THREAD_CLOSE still waits for its turn subscribes afresh, and that close is void. False when the engine was
   * unloaded since it was looked up (its last subscriber left meanwhile): look the thread up again.
   */
  subscribe(subscriber: Subscriber, patches?: boolean): boolean {
    if (this.unloaded) return false;
    if (!this.fanout.has(subscriber)) {
      this.fanout.subscribe(subscriber, patches);
      this.present().joined(subscriber);
      return true;
    }
    const rejoining = this.leaving?.delete(subscriber) ?? false;
    if (!rejoining && patches === undefined) return true;
    void this.queue.run(async () => {
      if (this.fanout.has(subscriber)) this.fanout.subscribe(subscriber, patches ?? false);
    });
    return true;
  }

  unsubscribe(subscriber: Subscriber): void {
    if (!this.fanout.unsubscribe(subscriber)) return;
    this.presence?.left(subscriber);
    this.unloadIfIdle();
  }

  /** CPP_THREAD_CLOSE: unsubscribes in the thread's turn, so that the frames the subscriber sent before are answered. */
  leave(subscriber: Subscriber): Promise<void> {
    const departure = {};
    const leaving = (this.leaving ??= new Map());
    leaving.set(subscriber, departure);
    return this.queue.run(async () => {
      if (leaving.get(subscriber) !== departure) return;
      leaving.delete(subscriber);
      this.unsubscribe(subscriber);
    });
  }

  /** `presence`: the subscriber gets CPP_PRESENCE from now on, the first right after its sync (§29.9). */
  sync(subscriber: Subscriber, presence = false): Promise<void> {
    return this.queue.run(async () => {
      this.sendSync(subscriber);
      if (presence && this.fanout.has(subscriber)) this.present().watch(subscriber);
    });
  }

  /** CPP_TYPING of a subscriber: not in the thread's turn, it changes nothing of the thread. */
  typing(subscriber: Subscriber, typing: boolean): void {
    if (this.fanout.has(subscriber)) this.present().typing(subscriber, typing);
  }

  private present(): ThreadPresence {
    this.presence ??= new ThreadPresence(this.threadId, this.link);
    return this.presence;
  }

  // ---- Operations: the frame → operation mapping, the one place it is written ----

  /** Runs a thread frame in the thread's turn, as asked by `identity` through `requester`. */
  apply(frame: ThreadFrame, identity: Identity, requester: Subscriber): Promise<void> {
    switch (frame.type) {
      case 'CPP_PROMPT':
        return this.runWhereItStreams(frame, identity, requester, () => prompt(this, frame, identity, requester));
      case 'CPP_PIVOT_INIT': {
        this.answer.abortSummaries();
        // Started before the queue: the time a pivot waits for its turn is part of its halt latency.
        const { activeThreadId, receivedContentLength, ...fields } = frame.payload;
        const observation = this.observer.pivotStarted({
          ...fields,
          threadId: activeThreadId,
          receivedContentLength,
          connectionId: requester.connectionId,
        });
        const pivoted = this.runWhereItStreams(frame, identity, requester, () =>
          pivot(this, frame, identity, requester, observation),
        );
        pivoted.then(
          () => observation.end(),
          (error: unknown) => observation.end(error),
        );
        return pivoted;
      }
      case 'CPP_STREAM_STOP':
        this.answer.abortSummaries();
        return this.runWhereItStreams(frame, identity, requester, () => stop(this, frame, identity));
      case 'CPP_REGENERATE':
        this.answer.abortSummaries();
        return this.runWhereItStreams(frame, identity, requester, () => regenerate(this, frame, identity, requester));
      case 'CPP_CONTINUE':
        return this.runWhereItStreams(frame, identity, requester, () =>
          continueAnswer(this, frame, identity, requester),
        );
      case 'CPP_ANCHOR_HEAD':
        return this.queue.run(() => anchor(this, frame, identity));
      case 'CPP_BRANCH_DELETE':
        return this.queue.run(() => deleteBranch(this, frame, identity));
      case 'CPP_THREAD_RENAME':
        return this.queue.run(() => rename(this, frame, identity, requester));
      case 'CPP_TOOL_APPROVAL':
        return this.runWhereItStreams(frame, identity, requester, () => approveToolCall(this, frame));
      case 'CPP_TOOL_RESULT':
        return this.runWhereItStreams(frame, identity, requester, () => answerToolCall(this, frame));
    }
  }

  /** CPP_THREAD_DELETE (see `deleteThread`), as asked by `identity`. */
  delete(frame: Extract<ClientFrame, { type: 'CPP_THREAD_DELETE' }>, identity: Identity): Promise<void> {
    return this.queue.run(() => deleteThread(this, frame, identity));
  }

  /** Server shutdown: the running answers are kept, as far as they were sent, as `interrupted`. */
  shutdown(): Promise<void> {
    this.answer.abortSummaries();
    return this.queue.run(async () => {
      const cuts = await this.answer.halt(() => ({}), 'shutdown');
      for (const [nodeId, cut] of cuts) await this.answer.commitHalt(nodeId, cut);
    });
  }

  // ---- What the tree edits are written with (ThreadContext) ----

  pivotListeners(context: PivotContext): Promise<void> {
    return this.dependencies.pivotListeners(context);
  }

  runHooks(context: OperationContext): Promise<void> {
    return this.dependencies.runHooks(context);
  }

  sendSync(requester: Subscriber): void {
    requester.send(this.fanout.syncFrame());
  }

  commit(plan: () => TreeChange, titling?: Titling): Promise<TreeChange> {
    return this.answer.commit(plan, titling);
  }

  publishChange(change: TreeChange): void {
    this.fanout.publishChange(change);
  }

  deleted(): void {
    this.fanout.publish('CPP_THREAD_DELETED', { threadId: this.threadId });
    this.closeDeleted();
  }

  /**
   * `did` lost the thread (docs/PROTOCOL.md §29.4): its subscribers on this server and on the others are told why
   * and unsubscribed at once, not in the thread's turn, so that nothing more of the thread reaches them.
   */
  revoke(did: string, reason: RevokeReason): void {
    const text = encodeServerFrame('CPP_THREAD_REVOKED', { threadId: this.threadId, did, reason });
    this.link.frame(text);
    this.dropRevoked(did, text);
  }

  private dropRevoked(did: string, text: string): void {
    const revoked = this.fanout.revoke(did, text);
    if (revoked.length === 0) return;
    for (const subscriber of revoked) this.presence?.left(subscriber);
    this.unloadIfIdle();
  }

  // ---- The other servers (LinkedEngine) and recovery ----

  /**
   * A frame that starts, stops or replaces an answer runs, in the thread's turn, where the thread's generation runs:
   * here, or on the server writing the answer, which makes every check of the frame itself (against the same store).
   * Checking here as well before forwarding cost a cross-node pivot a store round trip before it even left.
   */
  private runWhereItStreams(
    frame: ThreadFrame,
    identity: Identity,
    requester: Subscriber,
    operation: () => Promise<void>,
  ): Promise<void> {
    return this.queue.run(async () => {
      if (!(await this.ranElsewhere(frame, identity, requester))) await operation();
    });
  }

  /**
   * When a generation of another server streams in the thread, runs the frame there and returns true; recovers the
   * generation first when its server died. THREAD_BUSY while it is being recovered.
   */
  private async ranElsewhere(frame: ThreadFrame, identity: Identity, requester: Subscriber): Promise<boolean> {
    if (!this.streamsElsewhere()) return false;
    const reply = await this.link.forward(frame, identity);
    if (!reply) {
      // No live server holds it: its server died, or ended the answer and this copy has not heard yet.
      await this.recoverIfStillStreaming();
      if (this.streamsElsewhere())
        throw new CPPError(
          ErrorCode.THREAD_BUSY,
          `the generation of thread ${this.threadId} is being recovered; try again`,
        );
      return false;
    }
    if (!reply.ok) throw new CPPError(reply.code, reply.message);
    this.catchUp ??= new CopyCatchUp(
      this.graph,
      () => this.link.reload().catch((error: unknown) => this.dependencies.onBackgroundError(error, this.threadId)),
      CATCH_UP_PATIENCE_MS,
    );
    await this.catchUp.reach(reply.version);
    if (reply.retried) this.sendSync(requester);
    return true;
  }

  /** A generation of another server streams in this thread. */
  streamsElsewhere(): boolean {
    return this.generation.stream === undefined && streamingNode(this.graph) !== undefined;
  }

  /** The server generating in this thread died (its lock expired): its node is kept, as far as it streamed, as `interrupted`. */
  recoverLostGeneration(): Promise<void> {
    return this.queue.run(() => this.recoverLost());
  }

  /**
   * This copy, or the store, shows another server's answer streaming and no server holds the thread's lock: see
   * recoverIfStillStreaming. A thread loaded only for this is let go of afterwards.
   */
  recoverStaleGeneration(): Promise<void> {
    return this.queue.run(async () => {
      await this.recoverIfStillStreaming();
      this.unloadIfIdle();
    });
  }

  applyRemote(frame: ServerFrame, text: string, title: string | undefined): boolean {
    if (frame.type === 'CPP_THREAD_DELETED') {
      this.fanout.send(text);
      this.closeDeleted();
      return true;
    }
    if (frame.type === 'CPP_THREAD_REVOKED') {
      this.dropRevoked(frame.payload.did, text);
      return true;
    }
    const outcome = applyRemoteFrame(this.graph, frame, text);
    if (outcome.kind === 'gap') return false;
    if (outcome.kind === 'change') {
      if (title !== undefined) this.record.title = title;
      this.fanout.sendChange(text);
      this.loseOverriddenGeneration();
      this.catchUp?.moved();
    } else if (outcome.kind === 'frame') this.fanout.send(outcome.text, outcome.chunk);
    return true;
  }

  /**
   * The thread reloaded after this copy missed a change; subscribers get the whole of it when it differs. A load
   * older than this copy (read before a commit the copy has since applied) is refused: versions never go back.
   */
  resynchronise(stored: StoredThread): boolean {
    if (stored.graph.version < this.graph.version) return false;
    const before = streamState(this.graph);
    const { graph } = stored;
    Object.assign(this.graph, {
      rootNodeId: graph.rootNodeId,
      activeHeadMessageId: graph.activeHeadMessageId,
      version: graph.version,
      nodes: graph.nodes,
    });
    this.record.title = stored.title;
    for (const stream of this.generation.streams) {
      const own = getNode(this.graph, stream.nodeId);
      // The store holds this server's own generation only as far as its last batch.
      if (own?.status === 'streaming') {
        own.content = stream.text;
        setPartText(own, 'reasoning', stream.reasoning);
      }
    }
    this.loseOverriddenGeneration();
    this.catchUp?.moved();
    if (streamState(this.graph) !== before) this.fanout.send(this.fanout.syncFrame());
    return true;
  }

  generationLost(): void {
    this.generation.lose();
  }

  applyPresence(instance: string, present: PresentIdentity[], ask: boolean): void {
    if (!this.unloaded) this.present().remote(instance, present, ask);
  }

  /**
   * The answer's server may have ended it, released the lock, and its message may be on its way: the copy is read
   * first, without the lock, and what still streams then is recovered. Taking the lock for a copy that is only behind
   * would refuse, for that moment, the thread's next answer on any other server (THREAD_BUSY to a prompt sent after
   * the end it was shown).
   */
  private async recoverIfStillStreaming(): Promise<void> {
    await this.link.reload();
    if (this.streamsElsewhere()) await this.recoverLost();
  }

  /**
   * Commits the streaming nodes of a dead server (its answer, or its answers side by side) as `interrupted`, unless
   * another server does it or its server lives.
   */
  private async recoverLost(): Promise<void> {
    if (this.generation.stream) return;
    if (!(await this.generation.tryClaim())) return this.unloadIfIdle();
    await this.link.reload();
    const nodes = streamingNodes(this.graph);
    if (nodes.length === 0 || this.generation.stream) return this.generation.abandon();
    for (const node of nodes) await this.answer.commitHalt(node.id, cutOfLost(node), 'shutdown');
  }

  /** Another server ended this server's generation (it took the generation over): it must not stream on. */
  private loseOverriddenGeneration(): void {
    const { streams } = this.generation;
    if (streams.some((stream) => getNode(this.graph, stream.nodeId)?.status !== 'streaming')) this.generation.lose();
  }

  private closeDeleted(): void {
    this.catchUp?.endAll();
    this.queue.close(new CPPError(ErrorCode.NOT_FOUND, `thread ${this.threadId} was deleted`));
    this.fanout.unsubscribeAll();
    this.presence?.clear();
    this.unloadIfIdle();
  }

  private unloadIfIdle(): void {
    if (!this.idle || this.unloaded) return;
    this.unloaded = true;
    this.presence?.close();
    this.dependencies.onIdle(this);
  }
}

/** The cut of a dead server's answer: all it had stored. Where its last chunk began is not known here. */
function cutOfLost(node: MessageNode): Cut {
  const reasoning = node.reasoning ?? '';
  const part = node.content.length === 0 && reasoning.length > 0 ? 'reasoning' : 'content';
  return {
    content: node.content,
    reasoning,
    finalContentLength: node.content.length,
    part,
    lastChunkReceived: '',
    toolCalls: cutToolCalls(node.toolCalls ?? [], node.content.length),
  };
}
