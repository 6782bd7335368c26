import {
  CPPError,
  ErrorCode,
  applyChange,
  encodeServerFrame,
  getNode,
  newMessageId,
  pathToRoot,
  safeCutLength,
  planAnchor,
  planFinish,
  planPivotSplice,
  planPrompt,
  type FinishInput,
  type HaltReason,
  type MessageNode,
  type ServerFrameType,
  type ServerPayload,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import type { ModelProvider } from '../model/model-provider.js';
import { ProviderError } from '../model/provider-error.js';
import type { Observers } from '../observability/observers.js';
import type { PivotObservation } from '../observability/server-observer.js';
import type { ConversationStore, ThreadRecord } from '../store/conversation-store.js';
import { StoreConflictError } from '../store/store-conflict-error.js';
import { cutAt, type Cut } from './cut.js';
import { Generation, type GenerationOutcome } from './generation.js';
import type { Identity } from './identity.js';
import { modelMessages } from './model-context.js';
import { PivotContext, type PivotRequest } from './pivot-context.js';
import { SerialQueue } from './serial-queue.js';
import type { Subscriber } from './subscriber.js';

export interface ThreadEngineDependencies {
  store: ConversationStore;
  model: ModelProvider;
  persistIntervalMs: number;
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
}

export interface StopRequest {
  nodeId: string;
  receivedContentLength?: number;
}

/** A pivot in progress: what its steps have done so far. */
interface PivotRun {
  request: PivotRequest;
  observation: PivotObservation;
  cut?: Cut;
  aborted: boolean;
  spawned?: { assistantNodeId: string };
}

const TITLE_LENGTH = 80;

/**
 * The live state of one thread: its graph, its subscribers and its one active generation. Every operation runs
 * in the thread's serial queue, plans a change with the pure tree operations, commits it to the store in one
 * transaction, applies it to the graph, and only then tells the subscribers.
 */
export class ThreadEngine {
  private readonly queue = new SerialQueue();
  private readonly subscribers = new Map<Subscriber, { patches: boolean }>();
  private generation: Generation | undefined;

  constructor(
    private readonly record: ThreadRecord,
    readonly graph: ThreadGraph,
    private readonly dependencies: ThreadEngineDependencies,
  ) {}

  get threadId(): string {
    return this.graph.threadId;
  }

  get idle(): boolean {
    return this.subscribers.size === 0 && this.generation === undefined;
  }

  /** Subscribes at once (not in the queue), so that the engine is never unloaded under a frame about to use it. */
  subscribe(subscriber: Subscriber, patches?: boolean): void {
    const existing = this.subscribers.get(subscriber);
    this.subscribers.set(subscriber, { patches: patches ?? existing?.patches ?? false });
  }

  unsubscribe(subscriber: Subscriber): void {
    if (this.subscribers.delete(subscriber)) this.releaseIfIdle();
  }

  sync(subscriber: Subscriber): Promise<void> {
    return this.queue.run(async () => subscriber.send(this.syncFrame()));
  }

  prompt(request: PromptRequest, requester: Subscriber): Promise<void> {
    return this.queue.run(async () => {
      if (await this.isRetry(request.newNodeId, request.userPrompt, request.parentNodeId)) return requester.send(this.syncFrame());
      this.checkVersion(request.expectedVersion);
      await this.commitEndedGeneration();
      this.checkIdle();
      const assistantNodeId = newMessageId();
      const change = planPrompt(this.graph, {
        userNodeId: request.newNodeId,
        userPrompt: request.userPrompt,
        assistantNodeId,
        model: this.dependencies.model.model,
        createdAt: Date.now(),
        ...(request.parentNodeId === undefined ? {} : { parentNodeId: request.parentNodeId }),
      });
      await this.commit(change, request.userPrompt);
      this.publishChange(change);
      this.startGeneration(assistantNodeId);
    });
  }

  /** CPP_PIVOT_INIT: checks, then the 'pivot' listeners (or the default), then whatever they left undone. */
  pivot(request: PivotRequest & { expectedVersion?: number }, identity: Identity, requester: Subscriber): Promise<void> {
    // Started before the queue: the time a pivot waits for its turn is part of its halt latency.
    const observation = this.dependencies.observers.pivotStarted(request);
    const pivoted = this.queue.run(async () => {
      if (await this.isRetry(request.newBranchNodeId, request.userPrompt, request.interruptedNodeId)) return requester.send(this.syncFrame());
      this.checkVersion(request.expectedVersion);
      this.requireNode(request.interruptedNodeId);
      await this.commitEndedGeneration();
      if (this.generation && this.generation.nodeId !== request.interruptedNodeId) {
        throw new CPPError(ErrorCode.THREAD_BUSY, `node ${this.generation.nodeId} is streaming in thread ${this.threadId}; pivot that node`);
      }
      const run: PivotRun = { request, observation, aborted: false };
      const context = new PivotContext(request, identity, {
        abortActiveStream: () => this.abortForPivot(run),
        spawnSiblingStream: () => this.spawnSibling(run),
      });
      try {
        await this.dependencies.runPivot(context);
      } finally {
        if (run.cut && !run.spawned) {
          await this.commitHalt(request.interruptedNodeId, run.cut, 'pivot');
          observation.halted();
        }
      }
    });
    pivoted.then(() => observation.end(), (error: unknown) => observation.end(error));
    return pivoted;
  }

  stop(request: StopRequest): Promise<void> {
    return this.queue.run(async () => {
      const node = this.requireNode(request.nodeId);
      const cut = this.generation?.nodeId === node.id ? await this.haltGeneration(request.receivedContentLength) : undefined;
      if (!cut) throw new CPPError(ErrorCode.NOT_STREAMING, `node ${node.id} is ${getNode(this.graph, node.id)?.status}, not streaming`);
      await this.commitHalt(node.id, cut, 'stop');
    });
  }

  anchor(targetNodeId: string, expectedVersion: number | undefined): Promise<void> {
    return this.queue.run(async () => {
      this.checkVersion(expectedVersion);
      const change = planAnchor(this.graph, targetNodeId);
      await this.commit(change);
      this.publishChange(change);
    });
  }

  /** Server shutdown: the running answer is kept, as far as it was sent, as `interrupted`. */
  shutdown(): Promise<void> {
    return this.queue.run(async () => {
      const nodeId = this.generation?.nodeId;
      const cut = nodeId === undefined ? undefined : await this.haltGeneration(undefined);
      if (nodeId !== undefined && cut) await this.commitHalt(nodeId, cut, 'shutdown');
    });
  }

  private async abortForPivot(run: PivotRun): Promise<void> {
    if (run.aborted) return;
    run.aborted = true;
    if (this.generation?.nodeId !== run.request.interruptedNodeId) return;
    const cut = await run.observation.step('abort', () => this.haltGeneration(run.request.receivedContentLength));
    if (cut) run.cut = cut;
  }

  private async spawnSibling(run: PivotRun): Promise<{ assistantNodeId: string }> {
    if (run.spawned) return run.spawned;
    await this.abortForPivot(run);
    const assistantNodeId = newMessageId();
    const change = planPivotSplice(this.graph, {
      interruptedNodeId: run.request.interruptedNodeId,
      userNodeId: run.request.newBranchNodeId,
      userPrompt: run.request.userPrompt,
      assistantNodeId,
      model: this.dependencies.model.model,
      createdAt: Date.now(),
      ...(run.cut ? { cutContent: run.cut.content } : {}),
    });
    await run.observation.step('commit', () => this.commit(change, run.request.userPrompt));
    run.spawned = { assistantNodeId };
    run.observation.step('insert', () => {
      if (run.cut) {
        this.publishHalted(run.request.interruptedNodeId, run.cut, 'pivot');
        run.observation.halted();
      }
      this.publishChange(change);
    });
    run.observation.step('spawn', () => this.startGeneration(assistantNodeId));
    return run.spawned;
  }

  /**
   * Stops the running generation and returns where its text is cut. `undefined` when it had already ended by
   * itself: that ending is committed first, so the node is no longer streaming.
   */
  private async haltGeneration(receivedContentLength: number | undefined): Promise<Cut | undefined> {
    const generation = this.generation;
    if (!generation) return undefined;
    const point = generation.halt();
    if (point) return cutAt(point, receivedContentLength);
    await this.finishGeneration(generation);
    return undefined;
  }

  private async commitHalt(nodeId: string, cut: Cut, reason: HaltReason): Promise<void> {
    const change = planFinish(this.graph, { nodeId, status: 'interrupted', content: cut.content });
    await this.commit(change);
    this.publishHalted(nodeId, cut, reason);
    this.publishChange(change);
  }

  private startGeneration(assistantNodeId: string): void {
    const messages = modelMessages(pathToRoot(this.graph, assistantNodeId).slice(0, -1));
    const { provider, model } = this.dependencies.model;
    const observation = this.dependencies.observers.generationStarted({
      threadId: this.threadId,
      nodeId: assistantNodeId,
      provider,
      model,
      contextMessages: messages.length,
    });
    const generation = new Generation(
      assistantNodeId,
      this.dependencies.model,
      messages,
      {
        onChunk: (offset, delta) => {
          const node = getNode(this.graph, assistantNodeId);
          if (node) node.content += delta;
          const chunk = { threadId: this.threadId, nodeId: assistantNodeId, offset, delta };
          this.publish('CPP_STREAM_CHUNK', chunk, chunk);
        },
        onEnd: () => {
          this.queue.run(() => this.finishGeneration(generation)).catch((error: unknown) => this.dependencies.onBackgroundError(error, this.threadId));
        },
        persist: (content) => {
          this.dependencies.store
            .saveStreamingContent(this.threadId, assistantNodeId, content)
            .catch((error: unknown) => this.dependencies.onBackgroundError(error, this.threadId));
        },
      },
      this.dependencies.persistIntervalMs,
      observation,
    );
    this.generation = generation;
  }

  /** A stream that ended by itself while this operation waited its turn is not busy any more. */
  private async commitEndedGeneration(): Promise<void> {
    if (this.generation?.outcome) await this.finishGeneration(this.generation);
  }

  /** Commits how a generation ended by itself. Runs in the queue; a no-op when a halt got there first. */
  private async finishGeneration(generation: Generation): Promise<void> {
    const outcome = generation.outcome;
    if (this.generation !== generation || !outcome) return;
    const nodeId = generation.nodeId;
    const finish: FinishInput = { nodeId, status: outcome.kind === 'completed' ? 'completed' : 'failed', content: generation.text };
    if (outcome.kind === 'completed' && outcome.usage) finish.usage = outcome.usage;
    const change = planFinish(this.graph, finish);
    await this.commit(change);
    if (outcome.kind === 'completed') {
      this.publish('CPP_STREAM_COMPLETED', {
        threadId: this.threadId,
        nodeId,
        finalContentLength: generation.text.length,
        finishReason: outcome.finishReason,
      });
    } else {
      this.publish('CPP_ERROR', { code: ErrorCode.PROVIDER_ERROR, message: providerMessage(outcome), threadId: this.threadId, nodeId });
    }
    this.publishChange(change);
  }

  /**
   * Persists a change, then applies it to the live graph. The generation is over once its node has left
   * `streaming`, whatever the change was.
   */
  private async commit(change: TreeChange, prompt?: string): Promise<void> {
    const title = prompt !== undefined && this.record.title === '' ? titleOf(prompt) : undefined;
    try {
      await this.dependencies.store.commit(change, { updatedAt: Date.now(), ...(title ? { title } : {}) });
    } catch (error) {
      if (StoreConflictError.isInstance(error)) throw new CPPError(ErrorCode.CONFLICT, error.message);
      throw error;
    }
    applyChange(this.graph, change);
    if (title) this.record.title = title;
    const generation = this.generation;
    if (generation && getNode(this.graph, generation.nodeId)?.status !== 'streaming') {
      this.generation = undefined;
      this.releaseIfIdle();
    }
  }

  private releaseIfIdle(): void {
    if (this.idle) this.dependencies.onIdle(this);
  }

  /**
   * An exact retry of a frame that already created `nodeId` changes nothing; any other reuse of the id conflicts,
   * also in another thread, and before anything else is checked or done (a pivot must not halt a stream first).
   */
  private async isRetry(nodeId: string, prompt: string, parentId: string | undefined): Promise<boolean> {
    const existing = getNode(this.graph, nodeId);
    if (!existing) {
      const owner = await this.dependencies.store.findNodeThread(nodeId);
      if (owner === undefined) return false;
      throw new CPPError(ErrorCode.CONFLICT, `node id ${nodeId} is already used in another thread`);
    }
    const same = existing.role === 'user' && existing.content === prompt && (parentId === undefined || existing.parentId === parentId);
    if (!same) throw new CPPError(ErrorCode.CONFLICT, `node id ${nodeId} is already used by a different message`);
    return true;
  }

  private checkVersion(expectedVersion: number | undefined): void {
    if (expectedVersion !== undefined && expectedVersion !== this.graph.version) {
      throw new CPPError(ErrorCode.CONFLICT, `thread ${this.threadId} is at version ${this.graph.version}, not ${expectedVersion}`);
    }
  }

  private checkIdle(): void {
    if (this.generation) {
      throw new CPPError(ErrorCode.THREAD_BUSY, `node ${this.generation.nodeId} is streaming in thread ${this.threadId}; pivot it or stop it first`);
    }
  }

  private requireNode(nodeId: string): MessageNode {
    const node = getNode(this.graph, nodeId);
    if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `node ${nodeId} is not in thread ${this.threadId}`);
    return node;
  }

  private publishHalted(nodeId: string, cut: Cut, reason: HaltReason): void {
    this.publish('CPP_STREAM_HALTED', {
      interruptedNodeId: nodeId,
      finalContentLength: cut.finalContentLength,
      lastChunkReceived: cut.lastChunkReceived,
      threadId: this.threadId,
      reason,
    });
  }

  /** Each subscriber gets the change as it asked: a patch of the changed nodes, or the whole graph. */
  private publishChange(change: TreeChange): void {
    let patch: string | undefined;
    let sync: string | undefined;
    for (const [subscriber, { patches }] of this.subscribers) {
      if (patches) {
        patch ??= encodeServerFrame('CPP_GRAPH_PATCH', {
          threadId: this.threadId,
          version: change.version,
          rootNodeId: change.rootNodeId,
          activeHeadMessageId: change.activeHeadMessageId,
          nodes: Object.fromEntries(change.nodes.map((node) => [node.id, node])),
        });
        subscriber.send(patch);
      } else subscriber.send((sync ??= this.syncFrame()));
    }
  }

  /** `chunk` goes beside the text of a CPP_STREAM_CHUNK: a subscriber whose socket is behind merges chunks. */
  private publish<Type extends ServerFrameType>(type: Type, payload: ServerPayload<Type>, chunk?: ServerPayload<'CPP_STREAM_CHUNK'>): void {
    if (this.subscribers.size === 0) return;
    const text = encodeServerFrame(type, payload);
    for (const subscriber of this.subscribers.keys()) subscriber.send(text, chunk);
  }

  private syncFrame(): string {
    return encodeServerFrame('CPP_SYNC_GRAPH', {
      threadId: this.threadId,
      rootNodeId: this.graph.rootNodeId,
      activeHeadMessageId: this.graph.activeHeadMessageId,
      nodes: this.graph.nodes,
      version: this.graph.version,
      title: this.record.title,
    });
  }
}

function titleOf(prompt: string): string {
  const title = prompt.replace(/\s+/g, ' ').trim();
  return title.slice(0, safeCutLength(title, TITLE_LENGTH));
}

function providerMessage(outcome: Extract<GenerationOutcome, { kind: 'failed' }>): string {
  return ProviderError.isInstance(outcome.error) ? outcome.error.message : 'the model provider failed';
}
