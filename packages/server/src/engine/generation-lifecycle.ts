import {
  ErrorCode,
  getNode,
  pathToRoot,
  pathToRootAfter,
  planFinish,
  setPartText,
  partText,
  type FinishInput,
  type HaltReason,
  type MessageNode,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { ProviderError } from '../model/provider-error.js';
import type { PivotObservation } from '../observability/server-observer.js';
import { cutAt, type Cut, type ReceivedLengths } from './cut.js';
import { Generation, type GenerationOutcome } from './generation.js';
import type { GenerationSlot } from './generation-slot.js';
import { modelMessages } from './model-context.js';
import type { SerialQueue } from './serial-queue.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadCommitter } from './thread-committer.js';
import type { ThreadEngineDependencies } from './thread-engine.js';
import type { ThreadFanout } from './thread-fanout.js';

/**
 * The life of a thread's answers on this node: each generation started with the commit of its node, its chunks
 * sent, and its end, by itself or halted, committed and told.
 */
export class GenerationLifecycle {
  constructor(
    private readonly graph: ThreadGraph,
    private readonly queue: SerialQueue,
    private readonly fanout: ThreadFanout,
    private readonly slot: GenerationSlot,
    private readonly committer: ThreadCommitter,
    private readonly dependencies: Pick<ThreadEngineDependencies, 'models' | 'observers' | 'persister' | 'chunkIntervalMs' | 'onBackgroundError' | 'admitGeneration'>,
  ) {}

  /**
   * Commits a change that starts the answer `assistantNodeId`, with the answer's model call already on its way:
   * the call is made, held, before the commit, so that a store that commits over the network (PostgreSQL) does so
   * while the model works on its first token. (On SQLite the commit is synchronous, and the request leaves after
   * it. Letting the request leave first, by a `setImmediate` or a `process.nextTick`, was measured: no earlier first
   * token on the bench's machine, where the request's write and the commit it then waits for cost what they save.)
   * The text waits for the slot's `stream`, after the change is published: clients get the node before its first
   * chunk. A refused commit aborts the call, leaving nothing streaming.
   */
  async commitAnswer(
    plan: () => TreeChange,
    prompt: string,
    assistantNodeId: string,
    requester: Subscriber,
    step: PivotObservation['step'] = (_name, work) => work(),
  ): Promise<{ change: TreeChange; generation: Generation }> {
    // Planned before the call, so that a refused prompt or pivot never reaches the model; the commit uses this plan.
    const planned = await this.slot.releasingOnFailure(plan);
    let generation = await this.slot.releasingOnFailure(() => step('spawn', () => this.createGeneration(assistantNodeId, requester, pathToRootAfter(this.graph, planned, assistantNodeId))));
    let change: TreeChange;
    try {
      change = await step('commit', () => this.committer.commit(plan, { prompt }, planned));
    } catch (error) {
      generation.halt();
      throw error;
    }
    if (parentOf(change, assistantNodeId) !== parentOf(planned, assistantNodeId)) {
      // Planned again on a thread another server had changed: the answer's context moved with it.
      generation.halt();
      generation = this.createGeneration(assistantNodeId, requester, pathToRoot(this.graph, assistantNodeId));
    }
    return { change, generation };
  }

  /**
   * Stops the running generation and returns where its text is cut, which CPP_STREAM_HALTED confirms at once: the
   * cut is final as soon as the stream stops, and the commit that keeps it (`commitHalt`) need not delay it.
   * `undefined` when the stream had already ended by itself: that ending is committed first, so the node is no
   * longer streaming.
   */
  async haltGeneration(received: ReceivedLengths, reason: HaltReason): Promise<Cut | undefined> {
    const generation = this.slot.generation;
    if (!generation) return undefined;
    const point = generation.halt();
    if (!point) {
      await this.finishGeneration(generation);
      return undefined;
    }
    const cut = cutAt(point, received);
    this.fanout.publishHalted(generation.nodeId, cut, reason);
    return cut;
  }

  /**
   * Keeps a halted node, cut, as `interrupted`. Its CPP_STREAM_HALTED was sent when this server halted it; a
   * dead node's answer (`unannounced`) is announced only once the commit shows that no live node kept it.
   */
  async commitHalt(nodeId: string, cut: Cut, unannounced?: HaltReason): Promise<void> {
    const change = await this.committer.commit(() => planFinish(this.graph, { nodeId, status: 'interrupted', content: cut.content, reasoning: cut.reasoning }));
    if (unannounced) this.fanout.publishHalted(nodeId, cut, unannounced);
    this.fanout.publishChange(change);
  }

  /** A stream that ended by itself while this operation waited its turn is not busy any more. */
  async commitEndedGeneration(): Promise<void> {
    const generation = this.slot.generation;
    if (generation?.outcome) await this.finishGeneration(generation);
  }

  /**
   * A held generation writing `assistantNodeId`, whose branch is `branch` (the node last). `requester` asked for
   * the answer: its connection is named in what observers hear of it. A node that has text already (a continued
   * answer) is the last turn of the context, which the model goes on with; its parts continue from their lengths.
   */
  private createGeneration(assistantNodeId: string, requester: Subscriber, branch: MessageNode[]): Generation {
    const admitted = this.dependencies.admitGeneration(requester);
    const node = branch.at(-1);
    const messages = modelMessages(branch);
    const initial = { content: node?.content ?? '', reasoning: node ? partText(node, 'reasoning') : '' };
    const model = this.dependencies.models.providerOf(node?.model);
    const { threadId } = this.graph;
    const observation = this.dependencies.observers.generationStarted({
      connectionId: requester.connectionId,
      threadId,
      nodeId: assistantNodeId,
      provider: model.provider,
      model: model.model,
      contextMessages: messages.length,
    });
    const generation: Generation = new Generation(
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
        onEnd: () => {
          this.queue.run(() => this.finishGeneration(generation)).catch((error: unknown) => this.dependencies.onBackgroundError(error, threadId));
        },
        onStopped: admitted,
      },
      this.dependencies.chunkIntervalMs,
      observation,
      initial,
      initial.content.length > 0,
    );
    return generation;
  }

  /** Commits how a generation ended by itself. Runs in the queue; a no-op when a halt got there first. */
  private async finishGeneration(generation: Generation): Promise<void> {
    const outcome = generation.outcome;
    if (this.slot.generation !== generation || !outcome) return;
    const nodeId = generation.nodeId;
    const { threadId } = this.graph;
    const status = outcome.kind === 'completed' ? 'completed' : 'failed';
    const finish: FinishInput = { nodeId, status, content: generation.text, reasoning: generation.reasoning };
    if (outcome.kind === 'completed' && outcome.usage) finish.usage = outcome.usage;
    const change = await this.committer.commit(() => planFinish(this.graph, finish));
    if (outcome.kind === 'completed') {
      this.fanout.publish('CPP_STREAM_COMPLETED', {
        threadId,
        nodeId,
        finalContentLength: generation.text.length,
        finishReason: outcome.finishReason,
      });
    } else {
      this.fanout.publish('CPP_ERROR', { code: ErrorCode.PROVIDER_ERROR, message: providerMessage(outcome), threadId, nodeId });
    }
    this.fanout.publishChange(change);
  }
}

/** The parent of the user node above `assistantNodeId` in a change that creates both. */
function parentOf(change: TreeChange, assistantNodeId: string): string | null | undefined {
  const userNodeId = change.nodes.find((node) => node.id === assistantNodeId)?.parentId;
  return change.nodes.find((node) => node.id === userNodeId)?.parentId;
}

function providerMessage(outcome: Extract<GenerationOutcome, { kind: 'failed' }>): string {
  return ProviderError.isInstance(outcome.error) ? outcome.error.message : 'the model provider failed';
}
