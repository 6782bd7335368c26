// The answer's life, one module read top to bottom (issue 32): the generation's state machine and its lock
// (`ThreadGeneration`), then the steps that halt, start, commit, stream and finish an answer (`ThreadAnswer`, which
// `pivot.ts`, `prompt.ts` and `stop.ts` call directly). The model call itself, its steps and its pacing, is
// `AnswerStream` (answer-stream.ts). Every change of a thread reaches the store through `ThreadAnswer.commit`.
import {
  CPPError,
  ErrorCode,
  cutToolCalls,
  getNode,
  isFinalToolCallState,
  partText,
  pathToRoot,
  pathToRootAfter,
  planFinish,
  safeCutLength,
  setPartText,
  streamingNode,
  withToolCall,
  type AnswerContext,
  type Attachment,
  type FinishInput,
  type HaltReason,
  type MessageNode,
  type ToolCall,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { BranchSummaries, withSummary } from '../context/branch-summaries.js';
import type { ContextWindow } from '../context/context-window.js';
import { ContextFitter, type FittedContext } from '../context/context-fitting.js';
import type { ModelCatalog } from '../model/model-catalog.js';
import { ProviderError } from '../model/provider-error.js';
import type { ConversationStore, ThreadRecord } from '../store/conversation-store.js';
import { StoreConflictError } from '../store/store-conflict-error.js';
import { isUnreachable } from '../unreachable.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { AnswerStream } from './answer-stream.js';
import { commitUntilStored } from './commit-retry.js';
import { cutAt, type Cut, type ReceivedLengths } from './cut.js';
import type { AnswerOutcome, EngineObserver } from './engine-observer.js';
import { ANONYMOUS_DID } from './identity.js';
import type { SerialQueue } from './serial-queue.js';
import type { StreamPersister } from './stream-persister.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadFanout } from './thread-fanout.js';
import type { ThreadLink } from './thread-link.js';
import { applyCountedChange } from './thread-size.js';

/** What the answers of every thread of a server share. */
export interface AnswerDependencies {
  store: ConversationStore;
  /** The models answers are written by: the one a prompt or pivot names, or the default. */
  models: ModelCatalog;
  /** The shortest time between two chunks of one answer (see `ChunkPacer`). */
  chunkIntervalMs: number;
  /** Saves the text of this server's streaming answers while they stream. */
  persister: StreamPersister;
  /** The tools answers may call (docs/PROTOCOL.md §26). */
  tools: ToolRegistry;
  /** How long a summary of what a window leaves out may take (docs/PROTOCOL.md §28.5; default 30 s). */
  summaryTimeoutMs?: number;
  observer: EngineObserver;
  /**
   * Counts an answer about to be written for `requester` against the generation limits (RATE_LIMITED past them);
   * the returned function uncounts it once the answer stops.
   */
  admitGeneration(requester: Subscriber): () => void;
  /** A failure that no client frame answers (a batch that could not be persisted, a commit after a stream ended). */
  onBackgroundError(error: unknown, threadId: string): void;
}

/**
 * What a change does to the thread's title: a first prompt names a thread that has no title yet (a title the user
 * gave is never replaced); a rename names it, whatever it was.
 */
/** What titles a thread: its first prompt (with the files it carries, which title a prompt of files alone), or a rename. */
export type Titling =
  | { prompt: string; attachments?: readonly Pick<Attachment, 'name'>[] | undefined }
  | { rename: string };

const TITLE_LENGTH = 80;

/** A commit refused because another server had committed first is planned again on the thread reloaded, this often. */
const COMMIT_ATTEMPTS = 3;

// ---- The generation: where the thread's answers stand, as a state machine ----

/**
 * Where one answer of the thread's generation stands on this server.
 * - `streaming`: the answer's text flows to clients.
 * - `halting`: the stream was halted at `cut` (CPP_STREAM_HALTED is out); the commit that keeps the cut is pending.
 * - `ended`: the stream ended by itself; the commit of its end is pending.
 */
export type StreamState =
  | { name: 'streaming'; stream: AnswerStream }
  | { name: 'halting'; stream: AnswerStream; cut: Cut }
  | { name: 'ended'; stream: AnswerStream };

/**
 * Where the thread's one generation stands on this server: `idle` (no lock, no stream), `held` (the lock is taken
 * and the change that starts an answer is being committed, or recovered), or the state of its first answer
 * (`StreamState`). A generation writes one answer, or the answers several models write side by side to one prompt
 * (docs/PROTOCOL.md §30), each in its own `StreamState`. The lock (`ThreadLink`) is held in every state but `idle`.
 */
export type GenerationState = { name: 'idle' } | { name: 'held' } | StreamState;

/**
 * The generation of a thread and its lock, as one state machine. Each transition is named once:
 * `claim` (idle → held), `start` (held → streaming, each answer), `halt` (an answer streaming → halting), `end` (an
 * answer streaming → ended), `committed` (a commit moved the thread on: the answers it ended leave; → held, or →
 * idle once nothing streams here), `abandon` (the answer will not be committed: held → idle) and `lose` (another
 * server took the lock over: → idle, nothing committed). Leaving for `idle` is the one meaning of letting the lock go.
 */
export class ThreadGeneration {
  private held = false;
  /** The generation's answers on this server, in the order of their siblings. */
  private running: StreamState[] = [];

  constructor(
    private readonly threadId: string,
    private readonly link: ThreadLink,
    private readonly persister: StreamPersister,
    /** The generation is idle again: the thread may be unloaded. */
    private readonly onIdle: () => void,
  ) {}

  get state(): GenerationState {
    if (!this.held) return { name: 'idle' };
    return this.running[0] ?? { name: 'held' };
  }

  /** The stream of this server's generation (the first, when several models answer), whatever its state. */
  get stream(): AnswerStream | undefined {
    return this.running[0]?.stream;
  }

  /** Every stream of this server's generation, whatever its state. */
  get streams(): AnswerStream[] {
    return this.running.map((state) => state.stream);
  }

  /** The state of the answer `nodeId` of this server's generation. */
  stateOf(nodeId: string): StreamState | undefined {
    return this.running.find((state) => state.stream.nodeId === nodeId);
  }

  /** idle → held. Held already (a halted stream's thread, about to start the next answer): nothing to take. */
  async claim(): Promise<void> {
    if (!(await this.tryClaim())) {
      throw new CPPError(
        ErrorCode.THREAD_BUSY,
        `a generation is running in thread ${this.threadId} on another server; pivot it or stop it first`,
      );
    }
  }

  /** `claim`, with false instead of THREAD_BUSY when another engine holds the lock. */
  async tryClaim(): Promise<boolean> {
    if (!(await this.link.claimGeneration())) return false;
    this.held = true;
    return true;
  }

  /**
   * held → streaming: the committed answers' text flows from now on, side by side. Only a held generation with no
   * answer left starts them.
   */
  start(...streams: AnswerStream[]): void {
    // A stream replaced unseen would write on, never halted nor committed: a defect, never a client's doing.
    const state = this.state.name;
    if (state !== 'held') throw new Error(`a generation ${state} cannot start an answer`);
    this.running = streams.map((stream) => ({ name: 'streaming', stream }));
    for (const stream of streams) stream.flow();
  }

  /**
   * An answer streaming → halting: stops `stream` (the first, when none is named) and freezes its text; `cut` says
   * where it ends. `undefined` when the stream had already ended by itself (→ ended: its end is committed instead).
   */
  halt(received: ReceivedLengths, stream = this.stream): Cut | undefined {
    const index = this.running.findIndex((state) => state.stream === stream);
    const state = this.running[index];
    if (!state) return undefined;
    if (state.name === 'halting') return state.cut;
    const point = state.stream.halt();
    if (!point) {
      this.running[index] = { name: 'ended', stream: state.stream };
      return undefined;
    }
    const cut = cutAt(point, received);
    this.running[index] = { name: 'halting', stream: state.stream, cut };
    return cut;
  }

  /** An answer streaming → ended: the stream ended by itself (`stream.outcome` says how). */
  end(stream: AnswerStream): void {
    const index = this.running.findIndex((state) => state.stream === stream);
    if (this.running[index]?.name === 'streaming') this.running[index] = { name: 'ended', stream };
  }

  /**
   * A change was committed. The answers whose nodes it ended are no longer this server's to stream or to save; the
   * lock stays held while a node of the thread streams (an answer here, one the change starts, or one of a dead
   * server's being recovered), and is let go of otherwise (→ idle).
   */
  committed(stillStreaming: (nodeId: string) => boolean, threadStreams: boolean): void {
    this.running = this.running.filter(({ stream }) => {
      if (stillStreaming(stream.nodeId)) return true;
      this.persister.forget(stream.nodeId);
      return false;
    });
    if (this.running.length > 0 || threadStreams) return;
    this.toIdle();
  }

  /** The answer the lock was taken for will not be committed (its commit failed, or nothing was left to recover): held → idle. */
  abandon(): void {
    if (this.state.name === 'held') this.toIdle();
  }

  /** Another server took the lock over: the streams stop writing, nothing of them is committed here (→ idle). */
  lose(): void {
    if (this.running.length === 0) return;
    for (const { stream } of this.running) {
      stream.halt();
      this.persister.forget(stream.nodeId);
    }
    this.running = [];
    this.toIdle();
  }

  private toIdle(): void {
    this.held = false;
    this.link.releaseGeneration();
    this.onIdle();
  }
}

// ---- The answer's steps ----

/**
 * The life of a thread's answer, in the order it is lived: the running answer is halted at its cut (CPP_STREAM_HALTED
 * at once) and the cut committed; a new answer is planned, its model call spawned, the change that starts it
 * committed, then inserted (the change published, the text let flow); its chunks stream; an answer that ends by
 * itself is finished (its end committed). Every commit of the thread goes through `commit`, the one place a change
 * reaches the store and then the live graph. The operations (`pivot.ts`, `prompt.ts`, `stop.ts`) call these steps
 * in the thread's turn; the generation's state machine (`ThreadGeneration`) says which of them may run.
 */
export class ThreadAnswer {
  private readonly contextFitter = new ContextFitter();
  /**
   * What each answer's model was given: its `context`, recorded on the node its start commits (absent: it read the
   * whole branch), and the estimated tokens, which the provider's reported usage corrects.
   */
  private readonly fittedContexts = new WeakMap<AnswerStream, FittedContext>();
  /** The summaries read in place of what windows leave out, per branch point (docs/PROTOCOL.md §28.5). */
  private readonly summaries: BranchSummaries;
  /** Answers about to be spawned whose context was fitted with a summary, by node id (`summarise`). */
  private readonly summarised = new Map<string, FittedContext>();

  constructor(
    private readonly graph: ThreadGraph,
    private readonly record: ThreadRecord,
    private readonly link: ThreadLink,
    readonly generation: ThreadGeneration,
    private readonly fanout: ThreadFanout,
    /** The thread's turn: an answer that ends by itself is finished in it. */
    private readonly queue: SerialQueue,
    private readonly dependencies: AnswerDependencies,
  ) {
    this.summaries = new BranchSummaries(
      (error) => dependencies.onBackgroundError(error, graph.threadId),
      dependencies.summaryTimeoutMs,
    );
  }

  /**
   * The answer being started is halted before it began (a stop, a pivot or a regenerate came for the thread, or the
   * server shuts down): the summaries it waits for are aborted, and it starts without them, for that frame to halt.
   */
  abortSummaries(): void {
    this.summaries.abort();
  }

  // ---- Halt: the running answer stops at its cut ----

  /**
   * Halts this server's streams (only `nodeId`'s, when named) and sends CPP_STREAM_HALTED for each; the cuts, by
   * node id, are empty when none was streaming. A cut is final as soon as its stream stops, and CPP_STREAM_HALTED
   * confirms it at once: the commit that keeps it (`commitHalt`) need not delay it. A stream that had ended by itself
   * has its end committed instead (and no cut).
   */
  async halt(
    received: (nodeId: string) => ReceivedLengths,
    reason: HaltReason,
    nodeId?: string,
  ): Promise<Map<string, Cut>> {
    const cuts = new Map<string, Cut>();
    const streams = this.generation.streams.filter((stream) => nodeId === undefined || stream.nodeId === nodeId);
    // Every stream stops before any frame goes out, so that the cuts of answers side by side are taken at once.
    const halted = streams.map((stream) => ({ stream, cut: this.generation.halt(received(stream.nodeId), stream) }));
    for (const { stream, cut } of halted) {
      if (!cut) continue;
      this.fanout.publishHalted(stream.nodeId, cut, reason);
      cuts.set(stream.nodeId, cut);
    }
    for (const { stream, cut } of halted) if (!cut) await this.finish(stream);
    return cuts;
  }

  /**
   * Keeps a halted node, cut, as `interrupted`; `unannounced`: its CPP_STREAM_HALTED is sent only now (a dead
   * server's). When the store cannot be reached the frame that halted it fails (INTERNAL), but CPP_STREAM_HALTED has
   * told every client where the answer ends and nothing else would end it: the cut is kept once the store is back
   * (see `commitUntilStored`), unless the thread has moved on by then.
   */
  async commitHalt(nodeId: string, cut: Cut, unannounced?: HaltReason): Promise<void> {
    try {
      await this.keepCut(nodeId, cut, unannounced);
    } catch (error) {
      if (isUnreachable(error) && this.cutPending(nodeId)) {
        const { threadId } = this.graph;
        const keep = async () => {
          if (this.cutPending(nodeId)) await this.keepCut(nodeId, cut);
        };
        commitUntilStored(() => this.queue.run(keep), {
          wanted: () => this.cutPending(nodeId),
          onRetry: (retried) => this.dependencies.onBackgroundError(retried, threadId),
        }).catch((failure: unknown) => this.dependencies.onBackgroundError(failure, threadId));
      }
      throw error;
    }
  }

  /** The stream halted at a cut that no commit has kept yet writes `nodeId`. */
  private cutPending(nodeId: string): boolean {
    return this.generation.stateOf(nodeId)?.name === 'halting';
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

  /**
   * Runs the rest of an operation that halted the thread's stream to replace it (a pivot, a regenerate). When it
   * fails before a commit kept the cut, the halted answer is committed alone, `interrupted` as it was cut:
   * CPP_STREAM_HALTED has already told every client where it ends, and nothing else would end it.
   */
  async keepingTheCut(operation: () => Promise<void>): Promise<void> {
    try {
      await operation();
    } catch (error) {
      for (const { nodeId } of this.generation.streams) {
        const state = this.generation.stateOf(nodeId);
        if (state?.name === 'halting') await this.commitHalt(nodeId, state.cut);
      }
      throw error;
    }
  }

  /** Commits the end of the streams that ended by themselves while the operation waited its turn. */
  async commitEnded(): Promise<void> {
    for (const stream of this.generation.streams) if (stream.outcome) await this.finish(stream);
  }

  // ---- Start: plan → spawn → commit → insert ----

  /**
   * Starts the answers `assistantNodeIds` that `plan` creates (one, or one per model side by side), for `requester`:
   * their model calls leave before the commit, their text held until the change that creates them is published. The
   * generation must be claimed.
   */
  async start(
    plan: () => TreeChange,
    assistantNodeIds: readonly string[],
    requester: Subscriber,
    titling: Titling,
  ): Promise<void> {
    const planned = this.plan(plan);
    const summarising = this.summarise(planned, assistantNodeIds);
    if (summarising) await summarising;
    const { change, streams } = await this.commitAnswer(
      plan,
      planned,
      this.spawn(planned, assistantNodeIds, requester),
      requester,
      titling,
    );
    this.insert(change, streams);
  }

  /** Plans a change (what it checks runs now); a refusal lets the generation lock go. */
  plan(plan: () => TreeChange): TreeChange {
    try {
      return plan();
    } catch (error) {
      this.generation.abandon();
      throw error;
    }
  }

  /**
   * Fits the answers `assistantNodeIds` that `planned` creates whose model summarises what its window leaves out
   * (docs/PROTOCOL.md §28.5), the summary made once per branch point (`BranchSummaries`), for `spawn` to use.
   * Undefined, without a wait, when no answer needs a summary.
   */
  summarise(planned: TreeChange, assistantNodeIds: readonly string[]): Promise<void> | undefined {
    const { models, store } = this.dependencies;
    const waits: Promise<void>[] = [];
    for (const nodeId of assistantNodeIds) {
      const model = planned.nodes.find((node) => node.id === nodeId)?.model;
      const summarizer = models.summarizerOf(model);
      const window = models.contextWindowOf(model);
      if (!summarizer || !window) continue;
      const room = summaryRoom(window);
      const branch = pathToRootAfter(this.graph, planned, nodeId);
      let shorter: FittedContext;
      try {
        shorter = this.contextFitter.fit(
          branch,
          window,
          model ?? models.defaultId,
          (sha256) => store.attachmentBytes(sha256),
          room,
        );
      } catch {
        // CONTEXT_TOO_LONG: the spawn's own fitting refuses it, letting the generation go.
        continue;
      }
      if (!shorter.omitted) continue;
      const readable = models.contextWindowOf(summarizer.id);
      const reads = readable && readable.tokens - readable.reservedOutputTokens;
      waits.push(
        this.summaries.summary(shorter.omitted, summarizer, room, reads).then((summary) => {
          this.summarised.set(nodeId, summary === undefined ? shorter : withSummary(shorter, summary, room));
        }),
      );
    }
    return waits.length === 0 ? undefined : Promise.all(waits).then(() => undefined);
  }

  /**
   * Makes the model calls of the answers `assistantNodeIds` that `planned` creates, paused until `insert`. When one
   * cannot be made (a generation limit), none is: those made are halted, uncounted.
   */
  spawn(planned: TreeChange, assistantNodeIds: readonly string[], requester: Subscriber): AnswerStream[] {
    const streams: AnswerStream[] = [];
    const fits: SharedFit[] = [];
    try {
      for (const nodeId of assistantNodeIds)
        streams.push(this.stream(nodeId, requester, pathToRootAfter(this.graph, planned, nodeId), fits));
      return streams;
    } catch (error) {
      for (const stream of streams) stream.halt();
      this.generation.abandon();
      throw error;
    }
  }

  /**
   * Commits a planned answer (planned again when another server committed first); the stream is made again when the
   * new plan moved the answer's context. A refused commit halts the stream.
   *
   * The model calls are made before the commit, held, so that the models work on their first tokens while the change
   * commits. node:http writes a request a tick after it is made (`ClientRequest.onSocket` defers to
   * `process.nextTick`), while a commit goes on in microtasks, which run before any tick: on a store that commits
   * synchronously (SQLite, ~0.3 ms for a prompt here) the requests would leave only once it is done. So the commit
   * waits for one tick: Node runs the ticks queued until then (the requests', made by the spawn or in the microtasks
   * after it) before the microtasks that go on with the commit.
   */
  async commitAnswer(
    plan: () => TreeChange,
    planned: TreeChange,
    streams: AnswerStream[],
    requester: Subscriber,
    titling: Titling,
  ): Promise<{ change: TreeChange; streams: AnswerStream[] }> {
    await new Promise<void>((resolve) => process.nextTick(resolve));
    let change: TreeChange;
    const recorded = (change: TreeChange) =>
      streams.reduce(
        (each, stream) => withAnswerContext(each, stream.nodeId, this.fittedContexts.get(stream)?.context),
        change,
      );
    try {
      change = await this.commit(() => recorded(plan()), titling, recorded(planned));
    } catch (error) {
      for (const stream of streams) stream.halt();
      throw error;
    }
    const first = streams[0]?.nodeId ?? '';
    if (parentOf(change, first) === parentOf(planned, first)) return { change, streams };
    // Planned again on a thread another server had changed: the answers' context moved with it.
    for (const stream of streams) stream.halt();
    const again = streams.map(({ nodeId }) => this.stream(nodeId, requester, pathToRoot(this.graph, nodeId)));
    return { change, streams: again };
  }

  /**
   * Publishes the change that started the answers, then lets their text flow: clients get the nodes before their
   * first chunk.
   */
  insert(change: TreeChange, streams: AnswerStream[]): void {
    this.fanout.publishChange(change);
    this.generation.start(...streams);
  }

  // ---- Commit: every change of the thread, to the store in one transaction, then to the live graph ----

  /**
   * Plans a change, persists it, then applies it to the live graph, and tells the generation (see
   * `ThreadGeneration.committed`). When another server committed first, the change is planned again on the thread
   * reloaded (the plan checks again what it must). `planned`: the plan already made on the graph as it is. A commit
   * that fails lets the generation lock go unless a stream still holds it.
   */
  async commit(plan: () => TreeChange, titling?: Titling, planned?: TreeChange): Promise<TreeChange> {
    let change: TreeChange;
    try {
      change = await this.store(plan, titling, planned);
    } catch (error) {
      this.generation.abandon();
      throw error;
    }
    // A reload while the commit was on its way may have brought the change already.
    if (change.version > this.graph.version) applyCountedChange(this.graph, change);
    this.generation.committed(
      (nodeId) => getNode(this.graph, nodeId)?.status === 'streaming',
      streamingNode(this.graph) !== undefined,
    );
    return change;
  }

  /** The store's part of `commit`: planned again on the reloaded thread when another server committed first. */
  private async store(
    plan: () => TreeChange,
    titling: Titling | undefined,
    planned: TreeChange | undefined,
  ): Promise<TreeChange> {
    for (let attempt = 1; ; attempt += 1) {
      const change = attempt === 1 && planned ? planned : plan();
      const title = titleAfter(titling, this.record.title);
      try {
        await this.link.confirmGeneration();
        await this.dependencies.store.commit(change, { updatedAt: Date.now(), ...(title ? { title } : {}) });
      } catch (error) {
        if (!StoreConflictError.isInstance(error)) throw error;
        if (attempt < COMMIT_ATTEMPTS && (await this.caughtUp(change.baseVersion))) continue;
        throw new CPPError(ErrorCode.CONFLICT, error.message);
      }
      if (title) this.record.title = title;
      return change;
    }
  }

  /** Reloads the thread after a refused commit; true when it had moved on, so that planning again may succeed. */
  private async caughtUp(baseVersion: number): Promise<boolean> {
    await this.link.reload();
    return this.graph.version !== baseVersion;
  }

  // ---- Stream: the model call's chunks reach the clients, and its end is finished ----

  /**
   * A paused stream writing `assistantNodeId`, whose branch is `branch` (the node last), asked for by `requester`. A
   * node that has text already (a continued answer) is the last turn of the context, which the model goes on with;
   * its parts continue from their lengths.
   */
  private stream(
    assistantNodeId: string,
    requester: Subscriber,
    branch: MessageNode[],
    fits: SharedFit[] = [],
  ): AnswerStream {
    const { dependencies, graph, fanout } = this;
    const node = branch.at(-1);
    const summarised = this.summarised.get(assistantNodeId);
    this.summarised.delete(assistantNodeId);
    const fitted = summarised ?? this.fit(branch, fits);
    const { messages } = fitted;
    const admitted = dependencies.admitGeneration(requester);
    const initial = {
      content: node?.content ?? '',
      reasoning: node ? partText(node, 'reasoning') : '',
      toolCalls: node?.toolCalls ?? [],
    };
    // A continued answer goes on with its text, unless its last step called tools: then their results come last.
    const last = messages.at(-1);
    const continues = initial.content.length > 0 && last?.role === 'assistant' && !last.toolCalls?.length;
    const { threadId } = graph;
    const toolSaves = new ToolCallSaves(dependencies.store, threadId, assistantNodeId, (error) =>
      dependencies.onBackgroundError(error, threadId),
    );
    const model = dependencies.models.providerOf(node?.model);
    const observation = dependencies.observer.generationStarted({
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
          const streaming = getNode(graph, assistantNodeId);
          if (streaming) setPartText(streaming, part, partText(streaming, part) + delta);
          const chunk = { threadId, nodeId: assistantNodeId, offset, delta, ...(part === 'reasoning' ? { part } : {}) };
          fanout.publish('CPP_STREAM_CHUNK', chunk, chunk);
          dependencies.persister.append(threadId, assistantNodeId, part, offset, delta);
        },
        onToolCall: (call) => {
          const streaming = getNode(graph, assistantNodeId);
          if (streaming) streaming.toolCalls = withToolCall(streaming.toolCalls, call);
          fanout.publish('CPP_TOOL_CALL', { threadId, nodeId: assistantNodeId, toolCall: call });
          if (streaming) toolSaves.save(call, streaming.toolCalls ?? []);
        },
        onToolInput: (toolCallId, offset, delta) => {
          const streaming = getNode(graph, assistantNodeId);
          const call = streaming?.toolCalls?.find((held) => held.toolCallId === toolCallId);
          if (streaming && call)
            streaming.toolCalls = withToolCall(streaming.toolCalls, { ...call, input: call.input + delta });
          const chunk = { threadId, nodeId: assistantNodeId, offset, delta, part: 'tool-input' as const, toolCallId };
          fanout.publish('CPP_STREAM_CHUNK', chunk, chunk);
        },
        onEnd: () => {
          this.generation.end(stream);
          // The lock stays held until the end is stored: no other server takes an answer whose end is on its way.
          commitUntilStored(() => this.queue.run(() => this.finish(stream)), {
            wanted: () => this.generation.stateOf(stream.nodeId)?.stream === stream,
            onRetry: (error) => dependencies.onBackgroundError(error, threadId),
          }).catch((error: unknown) => dependencies.onBackgroundError(error, threadId));
        },
        onStopped: admitted,
      },
      dependencies.chunkIntervalMs,
      observation,
      { registry: dependencies.tools, threadId, identity: requester.identity?.did ?? ANONYMOUS_DID },
      initial,
      continues,
    );
    this.fittedContexts.set(stream, fitted);
    return stream;
  }

  /**
   * The context of the answer ending `branch`, fitted to its model's window. The answers of one spawn side by side
   * (`fits`) whose models read alike (one window, one way of counting tokens) share one fitting of their branch, made
   * for the first: their branches differ only in the new, empty answer at their end, which adds nothing to the
   * context. So several models asked at once fit a long branch and build its messages once, not once each.
   */
  private fit(branch: MessageNode[], fits: SharedFit[]): FittedContext {
    const { models, store } = this.dependencies;
    const node = branch.at(-1);
    const window = models.contextWindowOf(node?.model);
    const parentId = node?.parentId;
    const empty = node !== undefined && node.content === '' && !node.reasoning && !node.toolCalls?.length;
    const shared = empty ? fits.find((fit) => fit.parentId === parentId && readAlike(fit.window, window)) : undefined;
    if (shared) return { ...shared.fitted, messages: [...shared.fitted.messages] };
    const fitted = this.contextFitter.fit(branch, window, node?.model ?? models.defaultId, (sha256) =>
      store.attachmentBytes(sha256),
    );
    if (empty) fits.push({ parentId, window, fitted });
    return fitted;
  }

  /** Commits how a stream ended by itself. Runs in the thread's turn; a no-op when a halt got there first. */
  private async finish(stream: AnswerStream): Promise<void> {
    const outcome = stream.outcome;
    if (this.generation.stateOf(stream.nodeId)?.stream !== stream || !outcome) return;
    const { nodeId } = stream;
    const { threadId } = this.graph;
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
      const finishReason = outcome.finishReason;
      this.fanout.publish('CPP_STREAM_COMPLETED', {
        threadId,
        nodeId,
        finalContentLength: stream.text.length,
        finishReason,
      });
    } else {
      const message = providerMessage(outcome);
      this.fanout.publish('CPP_ERROR', { code: ErrorCode.PROVIDER_ERROR, message, threadId, nodeId });
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
    const { models } = this.dependencies;
    const model = getNode(this.graph, stream.nodeId)?.model;
    models.calibrate(model, fitted.tokens, inputTokens);
  }
}

// ---- Helpers ----

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

/** A fitting made for one answer of a spawn, which the others under the same parent may read (`ThreadAnswer.fit`). */
interface SharedFit {
  parentId: string | null | undefined;
  window: ContextWindow | undefined;
  fitted: FittedContext;
}

/** Two models' windows fit a branch alike: the same size, room, system prompt, scale and counter (or none). */
function readAlike(a: ContextWindow | undefined, b: ContextWindow | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.tokens === b.tokens &&
    a.reservedOutputTokens === b.reservedOutputTokens &&
    a.fixedTokens === b.fixedTokens &&
    a.estimateScale === b.estimateScale &&
    a.counter === b.counter
  );
}

/** The most a summary may take of a window: a tenth of what it reads, and no more than 1,024 tokens. */
const SUMMARY_TOKENS_MAX = 1_024;

/** The tokens kept in a window for the summary of what it leaves out (docs/PROTOCOL.md §28.5). */
function summaryRoom(window: ContextWindow): number {
  return Math.min(SUMMARY_TOKENS_MAX, Math.floor((window.tokens - window.reservedOutputTokens) / 10));
}

/** The parent of the user node above `assistantNodeId` in a change that creates both. */
function parentOf(change: TreeChange, assistantNodeId: string): string | null | undefined {
  const userNodeId = change.nodes.find((node) => node.id === assistantNodeId)?.parentId;
  return change.nodes.find((node) => node.id === userNodeId)?.parentId;
}

function titleAfter(titling: Titling | undefined, current: string): string | undefined {
  if (titling === undefined) return undefined;
  if ('rename' in titling) return titling.rename;
  return current === '' ? titleOf(titling.prompt, titling.attachments) : undefined;
}

/** docs/PROTOCOL.md §7.1: the prompt with white space collapsed and trimmed, or its first file's name when it says nothing. */
function titleOf(prompt: string, attachments: readonly Pick<Attachment, 'name'>[] = []): string {
  const collapsed = (text: string) => text.replace(/\s+/g, ' ').trim();
  const title = collapsed(prompt) || collapsed(attachments[0]?.name ?? '');
  return title.slice(0, safeCutLength(title, TITLE_LENGTH));
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
