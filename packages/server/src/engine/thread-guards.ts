import {
  CPPError,
  ErrorCode,
  getNode,
  streamingNodes,
  type MessageNode,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import type { ConversationStore } from '../store/conversation-store.js';

/**
 * An exact retry of a frame that already created `nodeId` changes nothing; any other reuse of the id conflicts,
 * also in another thread, and before anything else is checked or done (a pivot must not halt a stream first).
 */
export async function isRetry(
  graph: ThreadGraph,
  store: ConversationStore,
  nodeId: string,
  prompt: string,
  /** Undefined: any parent (the prompt went under the head); `null`: a first prompt. */
  parentId: string | null | undefined,
): Promise<boolean> {
  const existing = getNode(graph, nodeId);
  if (!existing) {
    await refuseIdOfAnotherThread(store, nodeId);
    return false;
  }
  const same =
    existing.role === 'user' &&
    existing.content === prompt &&
    (parentId === undefined || existing.parentId === parentId);
  if (!same) throw new CPPError(ErrorCode.CONFLICT, `node id ${nodeId} is already used by a different message`);
  return true;
}

/**
 * `isRetry` for a frame whose new node is an answer the client named (CPP_REGENERATE): an exact retry when the
 * node is an assistant node of `parentId`.
 */
export async function isAnswerRetry(
  graph: ThreadGraph,
  store: ConversationStore,
  nodeId: string,
  parentId: string,
): Promise<boolean> {
  const existing = getNode(graph, nodeId);
  if (!existing) {
    await refuseIdOfAnotherThread(store, nodeId);
    return false;
  }
  if (existing.role !== 'assistant' || existing.parentId !== parentId)
    throw new CPPError(ErrorCode.CONFLICT, `node id ${nodeId} is already used by a different message`);
  return true;
}

async function refuseIdOfAnotherThread(store: ConversationStore, nodeId: string): Promise<void> {
  const owner = await store.findNodeThread(nodeId);
  // Worded as for a reuse in this thread: the answer must not tell that the id is a node of another (someone's) thread.
  if (owner !== undefined)
    throw new CPPError(ErrorCode.CONFLICT, `node id ${nodeId} is already used by a different message`);
}

export function checkVersion(graph: ThreadGraph, expectedVersion: number | undefined): void {
  if (expectedVersion !== undefined && expectedVersion !== graph.version) {
    throw new CPPError(
      ErrorCode.CONFLICT,
      `thread ${graph.threadId} is at version ${graph.version}, not ${expectedVersion}`,
    );
  }
}

/**
 * Nothing streams but the nodes `halted` (this server's own generation, just halted): a node that streams while its
 * generation's server died, until recovered, is as busy as a live one.
 */
export function checkNothingStreams(graph: ThreadGraph, halted: readonly string[]): void {
  const streaming = streamingNodes(graph).find((node) => !halted.includes(node.id));
  if (streaming) {
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streaming.id} is streaming in thread ${graph.threadId}; pivot it or stop it first`,
    );
  }
}

export function requireNode(graph: ThreadGraph, nodeId: string): MessageNode {
  const node = getNode(graph, nodeId);
  if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `node ${nodeId} is not in thread ${graph.threadId}`);
  return node;
}
