import { planAnchor, planBranchDelete, planRename, type ClientFrame } from '@promethea/cpp-protocol';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext } from './thread-context.js';
import { checkNothingStreams, checkVersion, requireNode } from './thread-guards.js';

type Frame<Type extends ClientFrame['type']> = Extract<ClientFrame, { type: Type }>;

// The operations that change a thread without starting or halting an answer, each: checks → commit → publish.

/** CPP_ANCHOR_HEAD: the head moves to the target node. */
export async function anchor(thread: ThreadContext, frame: Frame<'CPP_ANCHOR_HEAD'>): Promise<void> {
  const { targetNodeId, expectedVersion } = frame.payload;
  const change = await thread.commit(() => {
    requireNode(thread.graph, targetNodeId);
    checkVersion(thread.graph, expectedVersion);
    return planAnchor(thread.graph, targetNodeId);
  });
  thread.publishChange(change);
}

/** CPP_BRANCH_DELETE (PROTOCOL.md §24.3): a node and its subtree removed; the head inside moves to the parent. */
export async function deleteBranch(thread: ThreadContext, frame: Frame<'CPP_BRANCH_DELETE'>): Promise<void> {
  const { nodeId, expectedVersion } = frame.payload;
  await thread.commitEnded();
  const change = await thread.commit(() => {
    requireNode(thread.graph, nodeId);
    checkVersion(thread.graph, expectedVersion);
    return planBranchDelete(thread.graph, nodeId);
  });
  thread.publishChange(change);
}

/** CPP_THREAD_RENAME: the user's own title; the title the thread already has is a retry, answered with a sync. */
export async function rename(
  thread: ThreadContext,
  frame: Frame<'CPP_THREAD_RENAME'>,
  requester: Subscriber,
): Promise<void> {
  const { title, expectedVersion } = frame.payload;
  if (thread.record.title === title) return thread.sendSync(requester);
  const change = await thread.commit(
    () => {
      checkVersion(thread.graph, expectedVersion);
      return planRename(thread.graph);
    },
    { rename: title },
  );
  thread.publishChange(change);
}

/**
 * CPP_THREAD_DELETE: the thread and everything in it, unless something streams. Every subscriber, on this server
 * and the others, is told and unsubscribed; the frames still queued for the thread, and any later, are NOT_FOUND.
 */
export async function deleteThread(thread: ThreadContext, expectedVersion: number | undefined): Promise<void> {
  checkVersion(thread.graph, expectedVersion);
  checkNothingStreams(thread.graph, undefined);
  await thread.store.deleteThread(thread.threadId);
  thread.deleted();
}
