import { CPPError, ErrorCode, getNode, type ClientFrame } from '@promethea/cpp-protocol';
import type { Identity } from './identity.js';
import { operationContext } from './operation-context.js';
import type { ThreadContext } from './thread-context.js';
import { requireNode } from './thread-guards.js';

/** CPP_STREAM_STOP, in the thread's turn: checks → halt and cut (CPP_STREAM_HALTED at once) → commit the cut → publish. */
export async function stop(
  thread: ThreadContext,
  frame: Extract<ClientFrame, { type: 'CPP_STREAM_STOP' }>,
  identity: Identity,
): Promise<void> {
  const { nodeId, receivedContentLength, receivedReasoningLength } = frame.payload;
  requireNode(thread.graph, nodeId);
  const notStreaming = () =>
    new CPPError(ErrorCode.NOT_STREAMING, `node ${nodeId} is ${getNode(thread.graph, nodeId)?.status}, not streaming`);
  if (!thread.generation.stateOf(nodeId)) throw notStreaming();
  await thread.runHooks(operationContext(frame, thread.threadId, identity));
  // Only the answer named halts: answers streaming beside it go on (docs/PROTOCOL.md §30.3). It may have ended by
  // itself while the hooks ran.
  const received = { content: receivedContentLength, reasoning: receivedReasoningLength };
  const cut = (await thread.answer.halt(() => received, 'stop', nodeId)).get(nodeId);
  if (!cut) throw notStreaming();
  await thread.answer.commitHalt(nodeId, cut);
}
