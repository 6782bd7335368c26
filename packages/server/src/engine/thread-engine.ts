import {
  CPPError,
  ErrorCode,
  getNode,
  newMessageId,
  planAnchor,
  planPivotSplice,
  planPrompt,
  type ServerFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { applyRemoteFrame } from '../cluster/remote-frame.js';
import type { ThreadCommand } from '../cluster/thread-command.js';
import type { ThreadLink } from '../cluster/thread-link.js';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { Observers } from '../observability/observers.js';
import type { PivotObservation } from '../observability/server-observer.js';
import type { ConversationStore, StoredThread, ThreadRecord } from '../store/conversation-store.js';
import type { Cut } from './cut.js';
import type { Generation } from './generation.js';
import { GenerationLifecycle } from './generation-lifecycle.js';
import { GenerationSlot } from './generation-slot.js';
import type { Identity } from './identity.js';
import { PivotContext, type PivotRequest } from './pivot-context.js';
import { SerialQueue } from './serial-queue.js';
import type { StreamPersister } from './stream-persister.js';
import type { Subscriber } from './subscriber.js';
import { ThreadCommitter } from './thread-committer.js';
import { ThreadFanout } from './thread-fanout.js';
import { checkIdle, checkNothingStreams, checkVersion, isRetry, requireNode, streamingNode } from './thread-guards.js';

export interface ThreadEngineDependencies {
  store: ConversationStore;
  /** The other nodes of the cluster, if any: what they must hear, and where the thread's generation runs. */
  link: ThreadLink;
  /** The models answers are written by: the one a prompt or pivot names, or the default. */
  models: ModelCatalog;
  /** The shortest time between two chunks of one answer (see `ChunkPacer`). */
  chunkIntervalMs: number;
  /** Saves the text of this server's streaming answers while they stream. */
  persister: StreamPersister;
  observers: Observers;
  /** Runs the server's 'pivot' listeners, or the default pivot when there are none. */
  runPivot(context: PivotContext): Promise<void>;
  /** The engine has no subscriber and no generation left: it may be unloaded. */
  onIdle(engine: ThreadEngine): void;
  /** A failure that no client frame answers (a batch that could not be persisted, a commit after a stream ended). */
  onBackgroundError(error: unknown, threadId: string): void;
}

export interface PromptRequest {
  userPrompt: string;
  newNodeId: string;
  parentNodeId?: string;
  expectedVersion?: number;
  /** The model to answer with; absent: the default. */
  model?: string;
}

export interface StopRequest {
  nodeId: string;
  receivedContentLength?: number;
}

/** A pivot in progress: what its steps have done so far. */
interface PivotRun {
  request: PivotRequest;
  /** The model the new answer is written by, checked before anything is halted. */
  model: string;
  requester: Subscriber;
  observation: PivotObservation;
  cut?: Cut;
  aborted: boolean;
  spawned?: { assistantNodeId: string };
}

/**
 * The live state of one thread: its graph, its subscribers and its one active generation. Every operation runs
 * in the thread's serial queue, plans a change with the pure tree operations, commits it to the store in one
 * transaction, applies it to the graph, and only then tells the subscribers.
 */
export class ThreadEngine {
  private readonly queue = new SerialQueue();
  private readonly fanout: ThreadFanout;
  private readonly slot: GenerationSlot;
  private readonly committer: ThreadCommitter;
  private readonly lifecycle: GenerationLifecycle;

  constructor(
    private readonly record: ThreadRecord,
    readonly graph: ThreadGraph,
    private readonly dependencies: ThreadEngineDependencies,
  ) {
    this.fanout = new ThreadFanout(graph, record, dependencies.link);
    this.slot = new GenerationSlot(graph.threadId, dependencies.link, dependencies.persister, () => this.releaseIfIdle());
    this.committer = new ThreadCommitter(graph, record, dependencies.store, dependencies.link, this.slot);
    this.lifecycle = new GenerationLifecycle(graph, this.queue, this.fanout, this.slot, this.committer, dependencies);
  }

  get threadId(): string {
    return this.graph.threadId;
  }

  /** The DID that created the thread. */
  get ownerDid(): string {
    return this.record.ownerDid;
  }

  /** This node's generation of the thread, if one runs here. */
  private get generation(): Generation | undefined {
    return this.slot.generation;
  }

  get idle(): boolean {
    return this.fanout.size === 0 && this.generation === undefined;
  }

  /** Subscribes at once (not in the queue), so that the engine is never unloaded under a frame about to use it. */
  subscribe(subscriber: Subscriber, patches?: boolean): void {
    this.fanout.subscribe(subscriber, patches);
  }

  unsubscribe(subscriber: Subscriber): void {
    if (this.fanout.unsubscribe(subscriber)) this.releaseIfIdle();
  }

  sync(subscriber: Subscriber): Promise<void> {
    return this.queue.run(async () => subscriber.send(this.fanout.syncFrame()));
  }

  prompt(request: PromptRequest, requester: Subscriber): Promise<void> {
    return this.queue.run(async () => {
      const retry = await isRetry(this.graph, this.dependencies.store, request.newNodeId, request.userPrompt, request.parentNodeId);
      if (retry) return requester.send(this.fanout.syncFrame());
      checkVersion(this.graph, request.expectedVersion);
      await this.lifecycle.commitEndedGeneration();
      if (await this.ranElsewhere({ type: 'CPP_PROMPT', request }, requester)) return;
      checkIdle(this.threadId, this.generation);
      const model = this.dependencies.models.resolve(request.model);
      const assistantNodeId = newMessageId();
      await this.slot.claim();
      const plan = () => {
        checkVersion(this.graph, request.expectedVersion);
        checkNothingStreams(this.graph, undefined);
        return planPrompt(this.graph, {
          userNodeId: request.newNodeId,
          userPrompt: request.userPrompt,
          assistantNodeId,
          model,
          createdAt: Date.now(),
          ...(request.parentNodeId === undefined ? {} : { parentNodeId: request.parentNodeId }),
        });
      };
      const { change, generation } = await this.lifecycle.commitAnswer(plan, request.userPrompt, assistantNodeId, requester);
      this.fanout.publishChange(change);
      this.slot.stream(generation);
    });
  }

  /** CPP_PIVOT_INIT: checks, then the 'pivot' listeners (or the default), then whatever they left undone. */
  pivot(request: PivotRequest & { expectedVersion?: number }, identity: Identity, requester: Subscriber): Promise<void> {
    // Started before the queue: the time a pivot waits for its turn is part of its halt latency.
    const observation = this.dependencies.observers.pivotStarted({ ...request, connectionId: requester.connectionId });
    const pivoted = this.queue.run(async () => {
      const retry = await isRetry(this.graph, this.dependencies.store, request.newBranchNodeId, request.userPrompt, request.interruptedNodeId);
      if (retry) return requester.send(this.fanout.syncFrame());
      checkVersion(this.graph, request.expectedVersion);
      requireNode(this.graph, request.interruptedNodeId);
      await this.lifecycle.commitEndedGeneration();
      if (await this.ranElsewhere({ type: 'CPP_PIVOT_INIT', request, identity }, requester)) return;
      if (this.generation && this.generation.nodeId !== request.interruptedNodeId) {
        throw new CPPError(ErrorCode.THREAD_BUSY, `node ${this.generation.nodeId} is streaming in thread ${this.threadId}; pivot that node`);
      }
      const run: PivotRun = { request, model: this.dependencies.models.resolve(request.model), requester, observation, aborted: false };
      const context = new PivotContext(request, identity, {
        abortActiveStream: () => this.abortForPivot(run),
        spawnSiblingStream: () => this.spawnSibling(run),
      });
      try {
        await this.dependencies.runPivot(context);
      } finally {
        if (run.cut && !run.spawned) await this.lifecycle.commitHalt(request.interruptedNodeId, run.cut);
      }
    });
    pivoted.then(() => observation.end(), (error: unknown) => observation.end(error));
    return pivoted;
  }

  stop(request: StopRequest): Promise<void> {
    return this.queue.run(async () => {
      const node = requireNode(this.graph, request.nodeId);
      if (await this.ranElsewhere({ type: 'CPP_STREAM_STOP', request })) return;
      const cut = this.generation?.nodeId === node.id ? await this.lifecycle.haltGeneration(request.receivedContentLength, 'stop') : undefined;
      if (!cut) throw new CPPError(ErrorCode.NOT_STREAMING, `node ${node.id} is ${getNode(this.graph, node.id)?.status}, not streaming`);
      await this.lifecycle.commitHalt(node.id, cut);
    });
  }

  anchor(targetNodeId: string, expectedVersion: number | undefined): Promise<void> {
    return this.queue.run(async () => {
      const change = await this.committer.commit(() => {
        requireNode(this.graph, targetNodeId);
        checkVersion(this.graph, expectedVersion);
        return planAnchor(this.graph, targetNodeId);
      });
      this.fanout.publishChange(change);
    });
  }

  /** Server shutdown: the running answer is kept, as far as it was sent, as `interrupted`. */
  shutdown(): Promise<void> {
    return this.queue.run(async () => {
      const nodeId = this.generation?.nodeId;
      const cut = nodeId === undefined ? undefined : await this.lifecycle.haltGeneration(undefined, 'shutdown');
      if (nodeId !== undefined && cut) await this.lifecycle.commitHalt(nodeId, cut);
    });
  }

  private async abortForPivot(run: PivotRun): Promise<void> {
    if (run.aborted) return;
    run.aborted = true;
    if (this.generation?.nodeId !== run.request.interruptedNodeId) return;
    const cut = await run.observation.step('abort', () => this.lifecycle.haltGeneration(run.request.receivedContentLength, 'pivot'));
    if (!cut) return;
    run.cut = cut;
    run.observation.halted();
  }

  private async spawnSibling(run: PivotRun): Promise<{ assistantNodeId: string }> {
    if (run.spawned) return run.spawned;
    await this.abortForPivot(run);
    const assistantNodeId = newMessageId();
    await this.slot.claim();
    const plan = () => {
      checkNothingStreams(this.graph, run.cut ? run.request.interruptedNodeId : undefined);
      return planPivotSplice(this.graph, {
        interruptedNodeId: run.request.interruptedNodeId,
        userNodeId: run.request.newBranchNodeId,
        userPrompt: run.request.userPrompt,
        assistantNodeId,
        model: run.model,
        createdAt: Date.now(),
        ...(run.cut ? { cutContent: run.cut.content } : {}),
      });
    };
    const { change, generation } = await this.lifecycle.commitAnswer(plan, run.request.userPrompt, assistantNodeId, run.requester, run.observation.step);
    run.spawned = { assistantNodeId };
    run.observation.step('insert', () => {
      this.fanout.publishChange(change);
      this.slot.stream(generation);
    });
    return run.spawned;
  }

  /** True when a generation streams on another node, which then ran the command. */
  private async ranElsewhere(command: ThreadCommand, requester?: Subscriber): Promise<boolean> {
    if (!this.streamsElsewhere()) return false;
    const reply = await this.dependencies.link.forward(command);
    if (!reply) {
      // No live node holds it: its node died. Keep what it streamed; the command then runs here.
      await this.recoverLost();
      if (this.streamsElsewhere()) throw new CPPError(ErrorCode.THREAD_BUSY, `the generation of thread ${this.threadId} is being recovered; try again`);
      return false;
    }
    if (!reply.ok) throw new CPPError(reply.code, reply.message);
    if (reply.retried) requester?.send(this.fanout.syncFrame());
    return true;
  }

  /** Commits the streaming node of a dead node as `interrupted`, unless another node does it or its node lives. */
  private async recoverLost(): Promise<void> {
    if (this.generation) return;
    if (!(await this.slot.tryClaim())) return this.releaseIfIdle();
    await this.dependencies.link.reload();
    const node = streamingNode(this.graph);
    if (!node || this.generation) return this.slot.settle(undefined);
    // Where the dead node's last chunk began is not known here: lastChunkReceived stays empty.
    await this.lifecycle.commitHalt(node.id, { content: node.content, finalContentLength: node.content.length, lastChunkReceived: '' }, 'shutdown');
  }

  /** A generation of another node streams in this thread. */
  streamsElsewhere(): boolean {
    return this.generation === undefined && streamingNode(this.graph) !== undefined;
  }

  /** The node generating in this thread died (its lock expired): its node is kept, as far as it streamed, as `interrupted`. */
  recoverLostGeneration(): Promise<void> {
    return this.queue.run(() => this.recoverLost());
  }

  /** A frame another node sent its subscribers, applied to this copy and passed on to this node's. False: a gap. */
  applyRemote(frame: ServerFrame, text: string, title: string | undefined): boolean {
    const outcome = applyRemoteFrame(this.graph, frame, text);
    if (outcome.kind === 'gap') return false;
    if (outcome.kind === 'change') {
      if (title !== undefined) this.record.title = title;
      this.fanout.sendChange(text);
      this.dropOverriddenGeneration();
    } else if (outcome.kind === 'frame') this.fanout.send(outcome.text, outcome.chunk);
    return true;
  }

  /** The thread reloaded after this copy missed a change; subscribers get the whole of it when it differs. */
  resynchronise(stored: StoredThread): void {
    const before = streamState(this.graph);
    const { graph } = stored;
    Object.assign(this.graph, { rootNodeId: graph.rootNodeId, activeHeadMessageId: graph.activeHeadMessageId, version: graph.version, nodes: graph.nodes });
    this.record.title = stored.title;
    const own = this.generation && getNode(this.graph, this.generation.nodeId);
    // The store holds this node's own generation only as far as its last batch.
    if (this.generation && own?.status === 'streaming') own.content = this.generation.text;
    this.dropOverriddenGeneration();
    if (streamState(this.graph) === before) return;
    this.fanout.send(this.fanout.syncFrame());
  }

  /** Another node took this thread's generation over while this one stalled: stop writing, commit nothing. */
  generationLost(): void {
    this.slot.lose();
  }

  /** Another node ended this node's generation (it took the generation over): it must not stream on. */
  private dropOverriddenGeneration(): void {
    if (this.generation && getNode(this.graph, this.generation.nodeId)?.status !== 'streaming') this.slot.lose();
  }

  private releaseIfIdle(): void {
    if (this.idle) this.dependencies.onIdle(this);
  }
}

/** What a reload may change without a new version: the streaming node's text. */
function streamState(graph: ThreadGraph): string {
  const streaming = streamingNode(graph);
  return `${graph.version} ${streaming?.id} ${streaming?.content.length}`;
}
