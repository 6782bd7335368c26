import { CPPError, ErrorCode, getNode, type ClientFrame } from '@promethea/cpp-protocol';
import type { AnswerStream } from './answer-stream.js';
import type { ThreadContext } from './thread-context.js';
import { requireNode } from './thread-guards.js';

/**
 * CPP_TOOL_APPROVAL, in the thread's turn: the call of the streaming answer that waits for approval is given the
 * person's answer, and goes on (docs/PROTOCOL.md §26.9). Its CPP_TOOL_CALL is the frame's answer.
 */
export async function approveToolCall(
  thread: ThreadContext,
  frame: Extract<ClientFrame, { type: 'CPP_TOOL_APPROVAL' }>,
): Promise<void> {
  const { nodeId, toolCallId, approved, reason } = frame.payload;
  const stream = streamOf(thread, nodeId);
  if (!stream.respondToApproval(toolCallId, reason === undefined ? { approved } : { approved, reason }))
    throw new CPPError(ErrorCode.CONFLICT, `tool call ${toolCallId} of node ${nodeId} is not waiting for approval`);
}

/**
 * CPP_TOOL_RESULT, in the thread's turn: the call of the streaming answer that waits for a client to run its tool
 * is given the client's output or error (docs/PROTOCOL.md §26.10). Its CPP_TOOL_CALL is the frame's answer.
 */
export async function answerToolCall(
  thread: ThreadContext,
  frame: Extract<ClientFrame, { type: 'CPP_TOOL_RESULT' }>,
): Promise<void> {
  const { nodeId, toolCallId, output, errorText } = frame.payload;
  const stream = streamOf(thread, nodeId);
  if (!stream.answerClientCall(toolCallId, output === undefined ? { errorText } : { output }))
    throw new CPPError(ErrorCode.CONFLICT, `tool call ${toolCallId} of node ${nodeId} is not waiting for a client`);
}

/** The streaming answer `nodeId`: NOT_FOUND when the thread has no such node, NOT_STREAMING when it has ended. */
function streamOf(thread: ThreadContext, nodeId: string): AnswerStream {
  requireNode(thread.graph, nodeId);
  const stream = thread.generation.stateOf(nodeId)?.stream;
  if (!stream)
    throw new CPPError(
      ErrorCode.NOT_STREAMING,
      `node ${nodeId} is ${getNode(thread.graph, nodeId)?.status}, not streaming`,
    );
  return stream;
}
