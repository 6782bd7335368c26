import {
  CPPError,
  encodeServerFrame,
  ErrorCode,
  getNode,
  pathToRoot,
  pathToRootAfter,
  partText,
  planFinish,
  setPartText,
  streamingNode,
  type AnswerContext,
  type ClientFrame,
  cutToolCalls,
  isFinalToolCallState,
  withToolCall,
  type FinishInput,
  type HaltReason,
  type MessageNode,
  type RevokeReason,
  type ServerFrame,
  type ThreadGraph,
  type ToolCall,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { ContextFitter, type FittedContext } from '../context/context-fitting.js';
import type { ModelCatalog } from '../model/model-catalog.js';
import { ProviderError } from '../model/provider-error.js';
import type { ConversationStore, StoredThread, ThreadRecord } from '../store/conversation-store.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { AnswerStream } from './answer-stream.js';
import { isUnreachable } from '../unreachable.js';
import { commitUntilStored } from './commit-retry.js';
import type { Cut, ReceivedLengths } from './cut.js';
import type { AnswerOutcome, EngineObserver } from './engine-observer.js';
import { ANONYMOUS_DID, type Identity } from './identity.js';
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
import type { StreamPersister } from './stream-persister.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext, ThreadLimits } from './thread-context.js';
import { ThreadCommitter, type Titling } from './thread-committer.js';
import { ThreadFanout } from './thread-fanout.js';
import type { ThreadFrame } from './thread-frame.js';
import { ThreadGeneration } from './thread-generation.js';
import type { LinkedEngine, ThreadLink } from './thread-link.js';
import { anchor, deleteBranch, deleteThread, rename } from './tree-edits.js';

/**
 * How long a frame run on another server waits for that server's change to reach this copy before reading the
 * thread from the store instead: the change is a message sent before the answer, normally milliseconds behind it.
 */
const CATCH_UP_PATIENCE_MS = 1000;

export interface ThreadEngineDependencies {
  store: ConversationStore;
  /** The models answers are written by: the one a prompt or pivot names, or the default. */
  models: ModelCatalog;
  /** The shortest time between two chunks of one answer (see `ChunkPacer`). */
  chunkIntervalMs: number;
  /** Saves the text of this server's streaming answers while they stream. */
  persister: StreamPersister;
  /** The tools answers may call (docs/PROTOCOL.md §26). */
  tools: ToolRegistry;
  observer: EngineObserver;
  limits: ThreadLimits;
  /**
   * Counts an answer about to be written for `requester` against the generation limits (RATE_LIMITED past them);
   * the returned function uncounts it once the answer stops.
   */
  admitGeneration(requester: Subscriber): () => void;
  /** Runs the server's 'pivot' listeners; the engine completes what they leave undone. */
  pivotListeners(context: PivotContext): Promise<void>;
  /** Runs the server's hooks of an operation (see `OperationContext`). */
  runHooks(context: OperationContext): Promise<void>;
  /** The engine has no subscriber and no generation left: it may be unloaded. */
  onIdle(engine: ThreadEngine): void;
  /** A failure that no client frame answers (a batch that could not be persisted, a commit after a stream ended). */
  onBackgroundError(error: unknown, threadId: string): void;
}

/**
 * The live state of one thread: its graph, its subscribers and its one generation. Every operation (a module of
 * its own: `pivot.ts`, `prompt.ts`, `stop.ts`, `tree-edits.ts`) runs in the thread's serial queue, plans a change
 * with the pure tree operations, commits it to the store in one transaction, applies it to the graph, and only then
 * tells the subscribers; this class gives them the steps they are written with (`ThreadContext`).
 */
export class ThreadEngine implements ThreadContext, LinkedEngine {
  private readonly queue = new SerialQueue();
  private readonly contextFitter = new ContextFitter();
  /**
   * What each answer's model was given: its `context`, recorded on the node its start commits (absent: it read the
   * whole branch), and the estimated tokens, which the provider's reported usage corrects.
   */
  private readonly fittedContexts = new WeakMap<AnswerStream, FittedContext>();
  /**
   * Subscribers whose CPP_THREAD_CLOSE waits for its turn, each with that close. This, and `catchUp`, are made when
   * first needed: what every open thread holds is multiplied by the threads a server keeps open (issue 20).
   */
  private leaving: Map<Subscriber, object> | undefined;
  private readonly fanout: ThreadFanout;
  private readonly committer: ThreadCommitter;
  /** Made by the first frame another server answers: a server alone never waits for its copy. */
  private catchUp: CopyCatchUp | undefined;
  readonly generation: ThreadGeneration;
  /** Set once the engine went idle and was let go of: the thread is looked up again, never subscribed to here. */
  private unloaded = false;

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
    this.committer = new ThreadCommitter(graph, record, dependencies.store, link, this.generation);
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
    if (this.fanout.unsubscribe(subscriber)) this.unloadIfIdle();
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

  sync(subscriber: Subscriber): Promise<void> {
    return this.queue.run(async () => this.sendSync(subscriber));
  }

  // ---- Operations: the frame → operation mapping, the one place it is written ----

  /** Runs a thread frame in the thread's turn, as asked by `identity` through `requester`. */
  apply(frame: ThreadFrame, identity: Identity, requester: Subscriber): Promise<void> {
    switch (frame.type) {
      case 'CPP_PROMPT':
        return this.runWhereItStreams(frame, identity, requester, () => prompt(this, frame, identity, requester));
      case 'CPP_PIVOT_INIT': {
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
        return this.runWhereItStreams(frame, identity, requester, () => stop(this, frame, identity));
      case 'CPP_REGENERATE':
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

  /** Server shutdown: the running answer is kept, as far as it was sent, as `interrupted`. */
  shutdown(): Promise<void> {
    return this.queue.run(async () => {
      const nodeId = this.generation.stream?.nodeId;
      const cut = nodeId === undefined ? undefined : await this.halt({}, 'shutdown');
      if (nodeId !== undefined && cut) await this.commitHalt(nodeId, cut);
    });
  }

  // ---- The steps operations are written with (ThreadContext) ----

  pivotListeners(context: PivotContext): Promise<void> {
    return this.dependencies.pivotListeners(context);
  }

  runHooks(context: OperationContext): Promise<void> {
    return this.dependencies.runHooks(context);
  }

  sendSync(requester: Subscriber): void {
    requester.send(this.fanout.syncFrame());
  }

  async commitEnded(): Promise<void> {
    const stream = this.generation.stream;
    if (stream?.outcome) await this.finish(stream);
  }

  /**
   * The cut is final as soon as the stream stops, and CPP_STREAM_HALTED confirms it at once: the commit that keeps
   * it (`commitHalt`) need not delay it. A stream that had ended by itself has its end committed instead.
   */
  async halt(received: ReceivedLengths, reason: HaltReason): Promise<Cut | undefined> {
    const stream = this.generation.stream;
    if (!stream) return undefined;
    const cut = this.generation.halt(received);
    if (!cut) {
      await this.finish(stream);
      return undefined;
    }
    this.fanout.publishHalted(stream.nodeId, cut, reason);
    return cut;
  }

  /**
   * Keeps a halted answer's cut. When the store cannot be reached the frame that halted it fails (INTERNAL), but
   * CPP_STREAM_HALTED has told every client where the answer ends and nothing else would end it: the cut is kept
   * once the store is back (see `commitUntilStored`), unless the thread has moved on by then.
   */
  async commitHalt(nodeId: string, cut: Cut, unannounced?: HaltReason): Promise<void> {
    try {
      await this.keepCut(nodeId, cut, unannounced);
    } catch (error) {
      if (isUnreachable(error) && this.cutPending(nodeId)) {
        const keep = async () => {
          if (this.cutPending(nodeId)) await this.keepCut(nodeId, cut);
        };
        commitUntilStored(() => this.queue.run(keep), {
          wanted: () => this.cutPending(nodeId),
          onRetry: (retried) => this.dependencies.onBackgroundError(retried, this.threadId),
        }).catch((failure: unknown) => this.dependencies.onBackgroundError(failure, this.threadId));
      }
      throw error;
    }
  }

  /** The stream halted at a cut that no commit has kept yet writes `nodeId`. */
  private cutPending(nodeId: string): boolean {
    const state = this.generation.state;
    return state.name === 'halting' && state.stream.nodeId === nodeId;
  }

  private async keepCut(nodeId: string, cut: Cut, unannounced?: HaltReason): Promise<void> {
    const change = await this.commit(() =>
      planFinish(this.graph, {
        nodeId,
        status: 'interrupted',
        content: cut.content,
        reasoning: cut.reasoning,
        toolCalls: cut.toolCalls,
      }),
    );
    if (unannounced) this.fanout.publishHalted(nodeId, cut, unannounced);
    this.fanout.publishChange(change);
  }

  async plan(plan: () => TreeChange): Promise<TreeChange> {
    try {
      return plan();
    } catch (error) {
      this.generation.abandon();
      throw error;
    }
  }

  spawn(planned: TreeChange, assistantNodeId: string, requester: Subscriber): AnswerStream {
    try {
      return this.answerStream(assistantNodeId, requester, pathToRootAfter(this.graph, planned, assistantNodeId));
    } catch (error) {
      this.generation.abandon();
      throw error;
    }
  }

  /**
   * The model call is made before the commit, held, so that a store that commits over the network (PostgreSQL) does
   * so while the model works on its first token. (On SQLite the commit is synchronous, and the request leaves after
   * it. Letting the request leave first, by a `setImmediate` or a `process.nextTick`, was measured: no earlier first
   * token on the bench's machine, where the request's write and the commit it then waits for cost what they save.)
   */
  async commitAnswer(
    plan: () => TreeChange,
    planned: TreeChange,
    stream: AnswerStream,
    requester: Subscriber,
    titling: Titling,
  ): Promise<{ change: TreeChange; stream: AnswerStream }> {
    let change: TreeChange;
    const context = this.fittedContexts.get(stream)?.context;
    const recorded = () => withAnswerContext(plan(), stream.nodeId, context);
    try {
      change = await this.committer.commit(recorded, titling, withAnswerContext(planned, stream.nodeId, context));
    } catch (error) {
      stream.halt();
      throw error;
    }
    if (parentOf(change, stream.nodeId) === parentOf(planned, stream.nodeId)) return { change, stream };
    // Planned again on a thread another server had changed: the answer's context moved with it.
    stream.halt();
    return { change, stream: this.answerStream(stream.nodeId, requester, pathToRoot(this.graph, stream.nodeId)) };
  }

  commit(plan: () => TreeChange, titling?: Titling): Promise<TreeChange> {
    return this.committer.commit(plan, titling);
  }

  publishChange(change: TreeChange): void {
    this.fanout.publishChange(change);
  }

  insert(change: TreeChange, stream: AnswerStream): void {
    this.fanout.publishChange(change);
    this.generation.start(stream);
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
    if (this.fanout.revoke(did, text)) this.unloadIfIdle();
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
    const stream = this.generation.stream;
    const own = stream && getNode(this.graph, stream.nodeId);
    // The store holds this server's own generation only as far as its last batch.
    if (stream && own?.status === 'streaming') {
      own.content = stream.text;
      setPartText(own, 'reasoning', stream.reasoning);
    }
    this.loseOverriddenGeneration();
    this.catchUp?.moved();
    if (streamState(this.graph) !== before) this.fanout.send(this.fanout.syncFrame());
    return true;
  }

  generationLost(): void {
    this.generation.lose();
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

  /** Commits the streaming node of a dead server as `interrupted`, unless another server does it or its server lives. */
  private async recoverLost(): Promise<void> {
    if (this.generation.stream) return;
    if (!(await this.generation.tryClaim())) return this.unloadIfIdle();
    await this.link.reload();
    const node = streamingNode(this.graph);
    if (!node || this.generation.stream) return this.generation.abandon();
    await this.commitHalt(node.id, cutOfLost(node), 'shutdown');
  }

  /** Another server ended this server's generation (it took the generation over): it must not stream on. */
  private loseOverriddenGeneration(): void {
    const stream = this.generation.stream;
    if (stream && getNode(this.graph, stream.nodeId)?.status !== 'streaming') this.generation.lose();
  }

  // ---- Answers ----

  /**
   * A paused stream writing `assistantNodeId`, whose branch is `branch` (the node last), asked for by `requester`. A
   * node that has text already (a continued answer) is the last turn of the context, which the model goes on with;
   * its parts continue from their lengths.
   */
  private answerStream(assistantNodeId: string, requester: Subscriber, branch: MessageNode[]): AnswerStream {
    const node = branch.at(-1);
    const fitted = this.contextFitter.fit(
      branch,
      this.models.contextWindowOf(node?.model),
      node?.model ?? this.models.defaultId,
      (sha256) => this.store.attachmentBytes(sha256),
    );
    const { messages } = fitted;
    const admitted = this.dependencies.admitGeneration(requester);
    const initial = {
      content: node?.content ?? '',
      reasoning: node ? partText(node, 'reasoning') : '',
      toolCalls: node?.toolCalls ?? [],
    };
    // A continued answer goes on with its text, unless its last step called tools: then their results come last.
    const last = messages.at(-1);
    const continues = initial.content.length > 0 && last?.role === 'assistant' && !last.toolCalls?.length;
    const toolSaves = new ToolCallSaves(this.dependencies.store, this.threadId, assistantNodeId, (error) =>
      this.dependencies.onBackgroundError(error, this.threadId),
    );
    const model = this.models.providerOf(node?.model);
    const { threadId } = this;
    const observation = this.observer.generationStarted({
      connectionId: requester.connectionId,
      threadId,
      nodeId: assistantNodeId,
      provider: model.provider,
      model: model.model,
      contextMessages: messages.length,
    });
    const stream: AnswerStream = new AnswerStream(
      assistantNodeId,
      model,
      messages,
      {
        onChunk: (part, offset, delta) => {
          const streaming = getNode(this.graph, assistantNodeId);
          if (streaming) setPartText(streaming, part, partText(streaming, part) + delta);
          const chunk = { threadId, nodeId: assistantNodeId, offset, delta, ...(part === 'reasoning' ? { part } : {}) };
          this.fanout.publish('CPP_STREAM_CHUNK', chunk, chunk);
          this.dependencies.persister.append(threadId, assistantNodeId, part, offset, delta);
        },
        onToolCall: (call) => {
          const streaming = getNode(this.graph, assistantNodeId);
          if (streaming) streaming.toolCalls = withToolCall(streaming.toolCalls, call);
          this.fanout.publish('CPP_TOOL_CALL', { threadId, nodeId: assistantNodeId, toolCall: call });
          if (streaming) toolSaves.save(call, streaming.toolCalls ?? []);
        },
        onToolInput: (toolCallId, offset, delta) => {
          const streaming = getNode(this.graph, assistantNodeId);
          const call = streaming?.toolCalls?.find((held) => held.toolCallId === toolCallId);
          if (streaming && call)
            streaming.toolCalls = withToolCall(streaming.toolCalls, { ...call, input: call.input + delta });
          const chunk = { threadId, nodeId: assistantNodeId, offset, delta, part: 'tool-input' as const, toolCallId };
          this.fanout.publish('CPP_STREAM_CHUNK', chunk, chunk);
        },
        onEnd: () => {
          this.generation.end(stream);
          // The lock stays held until the end is stored: no other server takes an answer whose end is on its way.
          commitUntilStored(() => this.queue.run(() => this.finish(stream)), {
            wanted: () => this.generation.stream === stream,
            onRetry: (error) => this.dependencies.onBackgroundError(error, threadId),
          }).catch((error: unknown) => this.dependencies.onBackgroundError(error, threadId));
        },
        onStopped: admitted,
      },
      this.dependencies.chunkIntervalMs,
      observation,
      { registry: this.dependencies.tools, threadId, identity: requester.identity?.did ?? ANONYMOUS_DID },
      initial,
      continues,
    );
    this.fittedContexts.set(stream, fitted);
    return stream;
  }

  /** Commits how a stream ended by itself. Runs in the queue; a no-op when a halt got there first. */
  private async finish(stream: AnswerStream): Promise<void> {
    const outcome = stream.outcome;
    if (this.generation.stream !== stream || !outcome) return;
    const { nodeId } = stream;
    const status = outcome.kind === 'completed' ? 'completed' : 'failed';
    // A failed answer's calls still going on are interrupted, as a halt would leave them.
    const toolCalls = cutToolCalls(stream.toolCalls, stream.text.length);
    const finish: FinishInput = { nodeId, status, content: stream.text, reasoning: stream.reasoning, toolCalls };
    if (outcome.kind === 'completed' && outcome.usage) {
      finish.usage = outcome.usage;
      this.calibrate(stream, outcome.usage.inputTokens);
    }
    const change = await this.commit(() => planFinish(this.graph, finish));
    if (outcome.kind === 'completed') {
      const finished = {
        threadId: this.threadId,
        nodeId,
        finalContentLength: stream.text.length,
        finishReason: outcome.finishReason,
      };
      this.fanout.publish('CPP_STREAM_COMPLETED', finished);
    } else {
      this.fanout.publish('CPP_ERROR', {
        code: ErrorCode.PROVIDER_ERROR,
        message: providerMessage(outcome),
        threadId: this.threadId,
        nodeId,
      });
    }
    this.fanout.publishChange(change);
  }

  /**
   * The provider counted `inputTokens` for the context the answer was given: the model's later estimates follow it. An
   * answer that called tools made several calls, whose usage adds up theirs: it says nothing of one context.
   */
  private calibrate(stream: AnswerStream, inputTokens: number | undefined): void {
    const fitted = this.fittedContexts.get(stream);
    if (!fitted || stream.toolCalls.length > 0) return;
    const model = getNode(this.graph, stream.nodeId)?.model;
    this.models.calibrate(model, fitted.tokens + this.models.contextWindowOf(model).fixedTokens, inputTokens);
  }

  private closeDeleted(): void {
    this.catchUp?.endAll();
    this.queue.close(new CPPError(ErrorCode.NOT_FOUND, `thread ${this.threadId} was deleted`));
    this.fanout.unsubscribeAll();
    this.unloadIfIdle();
  }

  private unloadIfIdle(): void {
    if (!this.idle || this.unloaded) return;
    this.unloaded = true;
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

/**
 * Saves a streaming answer's tool calls as they change, one save after another so that they reach the store in
 * order; not the input's pieces nor progress, which a crash may lose (the call is then recovered as interrupted).
 */
class ToolCallSaves {
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ConversationStore,
    private readonly threadId: string,
    private readonly nodeId: string,
    private readonly onError: (error: unknown) => void,
  ) {}

  save(changed: ToolCall, calls: readonly ToolCall[]): void {
    if (changed.progress && !isFinalToolCallState(changed.state)) return;
    const snapshot = structuredClone([...calls]);
    this.last = this.last
      .then(() => this.store.saveToolCalls(this.threadId, this.nodeId, snapshot))
      .catch(this.onError);
  }
}

/** The parent of the user node above `assistantNodeId` in a change that creates both. */
function parentOf(change: TreeChange, assistantNodeId: string): string | null | undefined {
  const userNodeId = change.nodes.find((node) => node.id === assistantNodeId)?.parentId;
  return change.nodes.find((node) => node.id === userNodeId)?.parentId;
}

function providerMessage(outcome: Extract<AnswerOutcome, { kind: 'failed' }>): string {
  return ProviderError.isInstance(outcome.error) ? outcome.error.message : 'the model provider failed';
}

/** `change` with the answer `nodeId` recording what its model read: `context`, or nothing when it read all. */
function withAnswerContext(change: TreeChange, nodeId: string, context: AnswerContext | undefined): TreeChange {
  const nodes = change.nodes.map((node) => {
    if (node.id !== nodeId) return node;
    const { context: _previous, ...rest } = node;
    return context ? { ...rest, context } : rest;
  });
  return { ...change, nodes };
}
