import {
  CPPError,
  ErrorCode,
  getNode,
  newMessageId,
  planAnchor,
  planBranchDelete,
  planContinue,
  continuedAnswer,
  planPivotSplice,
  planPrompt,
  planRegenerate,
  regeneratedPrompt,
  planRename,
  setPartText,
  streamingNode,
  type MessageNode,
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
import { checkIdle, checkNothingStreams, checkVersion, isAnswerRetry, isRetry, requireNode } from './thread-guards.js';

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
  /**
   * Counts an answer about to be written for `requester` against the generation limits (RATE_LIMITED past them);
   * the returned function uncounts it once the answer stops.
   */
  admitGeneration(requester: Subscriber): () => void;
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

export interface RegenerateRequest {
  userNodeId: string;
  newNodeId: string;
  receivedContentLength?: number;
  receivedReasoningLength?: number;
  expectedVersion?: number;
  /** The model to answer with; absent: the default. */
  model?: string;
}

export interface ContinueRequest {
  nodeId: string;
  expectedVersion?: number;
  /** The model to go on with; absent: the node's own when still offered, else the default. */
  model?: string;
}

export interface StopRequest {
  nodeId: string;
  receivedContentLength?: number;
  receivedReasoningLength?: number;
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
  /** Subscribers whose CPP_THREAD_CLOSE waits for its turn, each with that close. */
  private readonly leaving = new Map<Subscriber, object>();
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

  /**
   * Subscribes at once (not in the queue), so that the engine is never unloaded under a frame about to use it. A
   * subscriber already there gets the mode it asks for in its turn, after the frames it sent before; one whose
   * CPP_THREAD_CLOSE still waits for its turn subscribes afresh, and that close is void.
   */
  subscribe(subscriber: Subscriber, patches?: boolean): void {
    if (!this.fanout.has(subscriber)) return this.fanout.subscribe(subscriber, patches);
    const rejoining = this.leaving.delete(subscriber);
    if (!rejoining && patches === undefined) return;
    void this.queue.run(async () => {
      if (this.fanout.has(subscriber)) this.fanout.subscribe(subscriber, patches ?? false);
    });
  }

  unsubscribe(subscriber: Subscriber): void {
    if (this.fanout.unsubscribe(subscriber)) this.releaseIfIdle();
  }

  /** CPP_THREAD_CLOSE: unsubscribes in the thread's turn, so that the frames the subscriber sent before are answered. */
  leave(subscriber: Subscriber): Promise<void> {
    const departure = {};
    this.leaving.set(subscriber, departure);
    return this.queue.run(async () => {
      if (this.leaving.get(subscriber) !== departure) return;
      this.leaving.delete(subscriber);
      this.unsubscribe(subscriber);
    });
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

  /** CPP_REGENERATE (PROTOCOL.md §24.1): a new answer beside the user node's others, halting the one streaming. */
  regenerate(request: RegenerateRequest, requester: Subscriber): Promise<void> {
    return this.queue.run(async () => {
      if (await isAnswerRetry(this.graph, this.dependencies.store, request.newNodeId, request.userNodeId)) return requester.send(this.fanout.syncFrame());
      checkVersion(this.graph, request.expectedVersion);
      const userNode = regeneratedPrompt(this.graph, request.userNodeId);
      const model = this.dependencies.models.resolve(request.model);
      await this.lifecycle.commitEndedGeneration();
      if (await this.ranElsewhere({ type: 'CPP_REGENERATE', request }, requester)) return;
      const halting = this.generation;
      if (halting && getNode(this.graph, halting.nodeId)?.parentId !== userNode.id) {
        throw new CPPError(ErrorCode.THREAD_BUSY, `node ${halting.nodeId} is streaming in thread ${this.threadId}; stop it first`);
      }
      const received = { content: request.receivedContentLength, reasoning: request.receivedReasoningLength };
      const cut = halting && (await this.lifecycle.haltGeneration(received, 'regenerate'));
      try {
        await this.slot.claim();
        const plan = () => {
          checkNothingStreams(this.graph, cut ? halting.nodeId : undefined);
          return planRegenerate(this.graph, {
            userNodeId: userNode.id,
            assistantNodeId: request.newNodeId,
            model,
            createdAt: Date.now(),
            ...(halting && cut ? { halted: { nodeId: halting.nodeId, content: cut.content, reasoning: cut.reasoning } } : {}),
          });
        };
        const { change, generation } = await this.lifecycle.commitAnswer(plan, userNode.content, request.newNodeId, requester);
        this.fanout.publishChange(change);
        this.slot.stream(generation);
      } catch (error) {
        // The halted answer is kept as it was cut, alone, as a pivot whose branch could not be committed keeps it.
        if (halting && cut && getNode(this.graph, halting.nodeId)?.status === 'streaming') await this.lifecycle.commitHalt(halting.nodeId, cut);
        throw error;
      }
    });
  }

  /**
   * CPP_CONTINUE (PROTOCOL.md §24.4): an interrupted or failed answer streams again, the same node, its text going on
   * from where it stopped. A continue naming a node that streams is a retry, answered with a sync.
   */
  continue(request: ContinueRequest, requester: Subscriber): Promise<void> {
    return this.queue.run(async () => {
      const node = requireNode(this.graph, request.nodeId);
      if (node.status === 'streaming') return requester.send(this.fanout.syncFrame());
      checkVersion(this.graph, request.expectedVersion);
      continuedAnswer(this.graph, node.id);
      const { models } = this.dependencies;
      const model = models.resolve(request.model ?? (node.model !== undefined && models.offers(node.model) ? node.model : undefined));
      await this.lifecycle.commitEndedGeneration();
      if (await this.ranElsewhere({ type: 'CPP_CONTINUE', request }, requester)) return;
      checkIdle(this.threadId, this.generation);
      await this.slot.claim();
      const plan = () => {
        checkVersion(this.graph, request.expectedVersion);
        checkNothingStreams(this.graph, undefined);
        return planContinue(this.graph, { nodeId: node.id, model });
      };
      const prompt = getNode(this.graph, node.parentId ?? '')?.content ?? '';
      const { change, generation } = await this.lifecycle.commitAnswer(plan, prompt, node.id, requester);
      this.fanout.publishChange(change);
      this.slot.stream(generation);
    });
  }

  /** CPP_BRANCH_DELETE (PROTOCOL.md §24.3): a node and its subtree removed; the head inside moves to the parent. */
  deleteBranch(nodeId: string, expectedVersion: number | undefined): Promise<void> {
    return this.queue.run(async () => {
      await this.lifecycle.commitEndedGeneration();
      const change = await this.committer.commit(() => {
        requireNode(this.graph, nodeId);
        checkVersion(this.graph, expectedVersion);
        return planBranchDelete(this.graph, nodeId);
      });
      this.fanout.publishChange(change);
    });
  }

  stop(request: StopRequest): Promise<void> {
    return this.queue.run(async () => {
      const node = requireNode(this.graph, request.nodeId);
      if (await this.ranElsewhere({ type: 'CPP_STREAM_STOP', request })) return;
      const received = { content: request.receivedContentLength, reasoning: request.receivedReasoningLength };
      const cut = this.generation?.nodeId === node.id ? await this.lifecycle.haltGeneration(received, 'stop') : undefined;
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

  /** CPP_THREAD_RENAME: the user's own title; the title the thread already has is a retry, answered with a sync. */
  rename(title: string, expectedVersion: number | undefined, requester: Subscriber): Promise<void> {
    return this.queue.run(async () => {
      if (this.record.title === title) return requester.send(this.fanout.syncFrame());
      const plan = () => {
        checkVersion(this.graph, expectedVersion);
        return planRename(this.graph);
      };
      this.fanout.publishChange(await this.committer.commit(plan, { rename: title }));
    });
  }

  /**
   * CPP_THREAD_DELETE: the thread and everything in it, unless something streams. Every subscriber, on this node
   * and the others, is told and unsubscribed; the frames still queued for the thread, and any later, are NOT_FOUND.
   */
  delete(expectedVersion: number | undefined): Promise<void> {
    return this.queue.run(async () => {
      checkVersion(this.graph, expectedVersion);
      checkNothingStreams(this.graph, undefined);
      await this.dependencies.store.deleteThread(this.threadId);
      this.fanout.publish('CPP_THREAD_DELETED', { threadId: this.threadId });
      this.closeDeleted();
    });
  }

  /** Server shutdown: the running answer is kept, as far as it was sent, as `interrupted`. */
  shutdown(): Promise<void> {
    return this.queue.run(async () => {
      const nodeId = this.generation?.nodeId;
      const cut = nodeId === undefined ? undefined : await this.lifecycle.haltGeneration({}, 'shutdown');
      if (nodeId !== undefined && cut) await this.lifecycle.commitHalt(nodeId, cut);
    });
  }

  private async abortForPivot(run: PivotRun): Promise<void> {
    if (run.aborted) return;
    run.aborted = true;
    if (this.generation?.nodeId !== run.request.interruptedNodeId) return;
    const received = { content: run.request.receivedContentLength, reasoning: run.request.receivedReasoningLength };
    const cut = await run.observation.step('abort', () => this.lifecycle.haltGeneration(received, 'pivot'));
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
        ...(run.cut ? { cutContent: run.cut.content, cutReasoning: run.cut.reasoning } : {}),
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
    const cut = cutOfLost(node);
    await this.lifecycle.commitHalt(node.id, cut, 'shutdown');
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
    if (frame.type === 'CPP_THREAD_DELETED') {
      this.fanout.send(text);
      this.closeDeleted();
      return true;
    }
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
    if (this.generation && own?.status === 'streaming') {
      own.content = this.generation.text;
      setPartText(own, 'reasoning', this.generation.reasoning);
    }
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

  private closeDeleted(): void {
    this.queue.close(new CPPError(ErrorCode.NOT_FOUND, `thread ${this.threadId} was deleted`));
    this.fanout.unsubscribeAll();
    this.releaseIfIdle();
  }

  private releaseIfIdle(): void {
    if (this.idle) this.dependencies.onIdle(this);
  }
}

/** The cut of a dead node's answer: all it had stored. Where its last chunk began is not known here. */
function cutOfLost(node: MessageNode): Cut {
  const reasoning = node.reasoning ?? '';
  const part = node.content.length === 0 && reasoning.length > 0 ? 'reasoning' : 'content';
  return { content: node.content, reasoning, finalContentLength: node.content.length, part, lastChunkReceived: '' };
}

/** What a reload may change without a new version: the streaming node's text and reasoning. */
function streamState(graph: ThreadGraph): string {
  const streaming = streamingNode(graph);
  return `${graph.version} ${streaming?.id} ${streaming?.content.length} ${streaming?.reasoning?.length}`;
}
