import { ErrorCode, getNode, safeCutLength, type FinishReason, type MessageNode, type ServerFrame, type ThreadGraph } from '@promethea/cpp-protocol';
import { CPPServerError } from './cpp-server-error.js';
import { deferred } from './deferred.js';
import type { PendingRequest } from './pending-requests.js';

export type GenerationStatus = 'completed' | 'interrupted' | 'failed';

export interface GenerationResult {
  threadId: string;
  userNodeId: string;
  assistantNodeId: string;
  /** The assistant node's final text: all of it, or the cut when it was interrupted. */
  content: string;
  status: GenerationStatus;
  finishReason?: FinishReason;
}

export interface GenerationRequest {
  /** The id of the CPP_PROMPT, CPP_PIVOT_INIT or CPP_REGENERATE frame, which errors about it name as `refId`. */
  frameId: string;
  threadId: string;
  /** The user node answered: created by a prompt or pivot (the server creates the answer as its only child). */
  userNodeId: string;
  /** The answer's id when the client chose it (a regenerate); otherwise the server names it by creating it. */
  assistantNodeId?: string;
  onStream?: (delta: string) => void;
}

/**
 * One prompt, pivot or regenerate, from the frame that asked for it until its assistant node stops streaming. Everything it
 * reports is read from the thread's mirror, which is exact, so `onStream` never sees text twice or out of order.
 * It settles when the mirror shows the node finished (the patch right after CPP_STREAM_COMPLETED or
 * CPP_STREAM_HALTED), so that the mirror is final by then: its content is the whole answer, or the cut.
 */
export class Generation implements PendingRequest {
  private readonly settlement = deferred<GenerationResult>();
  private assistantNodeId: string | undefined;
  private delivered = 0;
  /** Set when the client halts this answer: text past what the user had seen is about to be cut, so never shown. */
  private visibleLength = Infinity;
  private finishReason: FinishReason | undefined;

  constructor(
    private readonly request: GenerationRequest,
    private readonly graphOf: (threadId: string) => ThreadGraph | undefined,
  ) {
    this.assistantNodeId = request.assistantNodeId;
  }

  get promise(): Promise<GenerationResult> {
    return this.settlement.promise;
  }

  get threadId(): string {
    return this.request.threadId;
  }

  observe(frame: ServerFrame): boolean {
    if (frame.type === 'CPP_ERROR') return this.observeError(frame.payload);
    const node = this.assistantNode();
    if (!node) return false;
    if (frame.type === 'CPP_STREAM_COMPLETED' && frame.payload.nodeId === node.id) this.finishReason = frame.payload.finishReason;
    this.deliver(node);
    return this.settleIfFinished(node);
  }

  fail(error: Error): void {
    this.settlement.reject(error);
  }

  interrupting(nodeId: string, receivedContentLength: number): void {
    if (nodeId === this.assistantNodeId) this.visibleLength = Math.min(this.visibleLength, receivedContentLength);
  }

  /** The server created the node our frame names as new: sending the frame again would only be an exact retry. */
  carriedOut(): boolean {
    const graph = this.graphOf(this.request.threadId);
    return graph !== undefined && getNode(graph, this.request.assistantNodeId ?? this.request.userNodeId) !== undefined;
  }

  /** The server names the assistant node only by creating it, in the patch or sync that adds our user node. */
  private assistantNode(): MessageNode | undefined {
    const graph = this.graphOf(this.request.threadId);
    if (!graph) return undefined;
    this.assistantNodeId ??= getNode(graph, this.request.userNodeId)?.childrenIds[0];
    return this.assistantNodeId === undefined ? undefined : getNode(graph, this.assistantNodeId);
  }

  private observeError(error: Extract<ServerFrame, { type: 'CPP_ERROR' }>['payload']): boolean {
    const refused = error.refId === this.request.frameId;
    const failed = error.code === ErrorCode.PROVIDER_ERROR && error.nodeId !== undefined && error.nodeId === this.assistantNodeId;
    if (refused || failed) this.settlement.reject(CPPServerError.fromFrame(error));
    return refused || failed;
  }

  private deliver(node: MessageNode): void {
    const visible = safeCutLength(node.content, this.visibleLength);
    if (visible <= this.delivered) return;
    const delta = node.content.slice(this.delivered, visible);
    this.delivered = visible;
    this.request.onStream?.(delta);
  }

  private settleIfFinished(node: MessageNode): boolean {
    if (node.status === 'streaming') return false;
    const { threadId, userNodeId } = this.request;
    const result: GenerationResult = { threadId, userNodeId, assistantNodeId: node.id, content: node.content, status: node.status };
    if (this.finishReason !== undefined) result.finishReason = this.finishReason;
    this.settlement.resolve(result);
    return true;
  }
}
