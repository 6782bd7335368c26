import {
  ErrorCode,
  TEXT_PARTS,
  getNode,
  partText,
  safeCutLength,
  type FinishReason,
  type MessageNode,
  type ServerFrame,
  type TextPart,
  type ThreadGraph,
  type ToolCall,
} from '@promethea/cpp-protocol';
import { CPPServerError } from './cpp-server-error.js';
import { deferred } from './deferred.js';
import type { PendingRequest, ReceivedLengths } from './pending-requests.js';

export type GenerationStatus = 'completed' | 'interrupted' | 'failed';

export interface GenerationResult {
  threadId: string;
  userNodeId: string;
  assistantNodeId: string;
  /** The assistant node's final text: all of it, or the cut when it was interrupted (a continued node's whole text). */
  content: string;
  /** What the model reasoned, apart from its answer, when it did (PROTOCOL.md §11.5). */
  reasoning?: string;
  status: GenerationStatus;
  finishReason?: FinishReason;
  /** The tools the answer called, as the node keeps them (PROTOCOL.md §26); absent when it called none. */
  toolCalls?: ToolCall[];
  /**
   * When several models answered side by side (PROTOCOL.md §30): each one's answer, in the order the models were
   * named, the first being the one the fields above describe.
   */
  answers?: SideBySideAnswer[];
}

/** One model's answer of several side by side, as it ended. */
export interface SideBySideAnswer {
  assistantNodeId: string;
  model?: string;
  content: string;
  reasoning?: string;
  status: GenerationStatus;
}

export interface GenerationRequest {
  /** The id of the CPP_PROMPT, CPP_PIVOT_INIT or CPP_REGENERATE frame, which errors about it name as `refId`. */
  frameId: string;
  threadId: string;
  /** The user node answered: created by a prompt or pivot (the server creates the answer as its only child). */
  userNodeId: string;
  /** The answer's id when the client chose it (a regenerate) or it exists (a continue); otherwise the server names it by creating it. */
  assistantNodeId?: string;
  /** A continue: the node exists, finished, and this request is carried out once it streams again. */
  continues?: boolean;
  /** How many models answer side by side (PROTOCOL.md §30), the first answer's siblings after it; default 1. */
  answers?: number | undefined;
  onStream?: (delta: string) => void;
  onReasoning?: (delta: string) => void;
}

/**
 * One prompt, pivot, regenerate or continue, from the frame that asked for it until its assistant node stops streaming.
 * Everything it reports is read from the thread's mirror, which is exact, so `onStream` (the answer) and `onReasoning`
 * (the model's reasoning) never see text twice or out of order; a continue reports only what follows the node's text.
 * It settles when the mirror shows the node finished (the patch right after CPP_STREAM_COMPLETED or
 * CPP_STREAM_HALTED), so that the mirror is final by then: its content is the whole answer, or the cut.
 */
export class Generation implements PendingRequest {
  private readonly settlement = deferred<GenerationResult>();
  private assistantNodeId: string | undefined;
  private readonly delivered: Record<TextPart, number> = { content: 0, reasoning: 0 };
  /** Set when the client halts this answer: text past what the user had seen is about to be cut, so never shown. */
  private readonly visible: Record<TextPart, number> = { content: Infinity, reasoning: Infinity };
  private finishReason: FinishReason | undefined;
  /** A continue waits for its node to stream again; every other answer streams from its creation. */
  private started: boolean;
  /** A continue: its node's status and text lengths when it was asked for, which only a continuation changes. */
  private readonly continuedFrom: ({ status: MessageNode['status'] } & Record<TextPart, number>) | undefined;

  constructor(
    private readonly request: GenerationRequest,
    private readonly graphOf: (threadId: string) => ThreadGraph | undefined,
  ) {
    this.assistantNodeId = request.assistantNodeId;
    this.started = !request.continues;
    const continued = request.continues ? this.assistantNode() : undefined;
    if (continued) for (const part of TEXT_PARTS) this.delivered[part] = partText(continued, part).length;
    this.continuedFrom = continued && { status: continued.status, ...this.delivered };
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
    this.started ||= this.streamedSinceAsked(node);
    if (!this.started) return false;
    if (frame.type === 'CPP_STREAM_COMPLETED' && frame.payload.nodeId === node.id)
      this.finishReason = frame.payload.finishReason;
    this.deliver(node, 'reasoning', this.request.onReasoning);
    this.deliver(node, 'content', this.request.onStream);
    return this.settleIfFinished(node);
  }

  fail(error: Error): void {
    this.settlement.reject(error);
  }

  interrupting(nodeId: string, received: ReceivedLengths): void {
    if (nodeId !== this.assistantNodeId) return;
    for (const part of TEXT_PARTS) this.visible[part] = Math.min(this.visible[part], received[part]);
  }

  /**
   * The server created the node our frame names as new, or (a continue) set it streaming: sending the frame again
   * would only be an exact retry.
   */
  carriedOut(): boolean {
    if (this.request.continues) {
      const node = this.assistantNode();
      return this.started || (node !== undefined && this.streamedSinceAsked(node));
    }
    const graph = this.graphOf(this.request.threadId);
    return graph !== undefined && getNode(graph, this.request.assistantNodeId ?? this.request.userNodeId) !== undefined;
  }

  /**
   * Whether the node streams, or a continue's node changed since it was asked for: its continuation streamed and
   * ended while the client was away, and a re-sync shows the result. Sent again, the continue would be refused (the
   * node is no longer interrupted or failed), so the call settles from the synced node, as a prompt's does.
   */
  private streamedSinceAsked(node: MessageNode): boolean {
    if (node.status === 'streaming') return true;
    const from = this.continuedFrom;
    return (
      from !== undefined &&
      (node.status !== from.status || TEXT_PARTS.some((part) => partText(node, part).length > from[part]))
    );
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
    const failed =
      error.code === ErrorCode.PROVIDER_ERROR && error.nodeId !== undefined && error.nodeId === this.assistantNodeId;
    if (refused || failed) this.settlement.reject(CPPServerError.fromFrame(error));
    return refused || failed;
  }

  private deliver(node: MessageNode, part: TextPart, listener: ((delta: string) => void) | undefined): void {
    const text = partText(node, part);
    const visible = safeCutLength(text, this.visible[part]);
    if (visible <= this.delivered[part]) return;
    const delta = text.slice(this.delivered[part], visible);
    this.delivered[part] = visible;
    listener?.(delta);
  }

  private settleIfFinished(node: MessageNode): boolean {
    if (node.status === 'streaming') return false;
    const sideBySide = this.sideBySide(node);
    if (sideBySide?.some((answer) => answer.status === 'streaming')) return false;
    const { threadId, userNodeId } = this.request;
    const result: GenerationResult = {
      threadId,
      userNodeId,
      assistantNodeId: node.id,
      content: node.content,
      status: node.status,
    };
    if (node.reasoning !== undefined) result.reasoning = node.reasoning;
    if (node.toolCalls !== undefined) result.toolCalls = node.toolCalls;
    if (this.finishReason !== undefined) result.finishReason = this.finishReason;
    if (sideBySide) result.answers = sideBySide.map(sideBySideAnswer);
    this.settlement.resolve(result);
    return true;
  }

  /** The answers of the models side by side, from the first (`node`) on: the siblings created with it. */
  private sideBySide(node: MessageNode): MessageNode[] | undefined {
    const count = this.request.answers ?? 1;
    const graph = this.graphOf(this.request.threadId);
    const parent = graph && node.parentId !== null ? getNode(graph, node.parentId) : undefined;
    if (count < 2 || !graph || !parent) return undefined;
    const first = parent.childrenIds.indexOf(node.id);
    const ids = parent.childrenIds.slice(first, first + count);
    return ids.map((id) => getNode(graph, id)).filter((answer): answer is MessageNode => answer !== undefined);
  }
}

/** An answer side by side, once none of them streams (`settleIfFinished`). */
function sideBySideAnswer(node: MessageNode): SideBySideAnswer {
  const status = node.status as GenerationStatus;
  const answer: SideBySideAnswer = { assistantNodeId: node.id, content: node.content, status };
  if (node.model !== undefined) answer.model = node.model;
  if (node.reasoning !== undefined) answer.reasoning = node.reasoning;
  return answer;
}
