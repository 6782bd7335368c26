import { planAnchor, planBranchDelete, planRename, type ClientFrame } from '@promethea/cpp-protocol';
import type { Identity } from './identity.js';
import { operationContext } from './operation-context.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext } from './thread-context.js';
import { checkNothingStreams, checkVersion, requireNode } from './thread-guards.js';

type Frame<Type extends ClientFrame['type']> = Extract<ClientFrame, { type: Type }>;

// The operations that change a thread without starting or halting an answer, each: checks → hooks → commit →
// publish. The plan holds the checks: run once before the hooks, it runs again in the commit, on the thread as it is
// then (another server may have committed meanwhile).

/** CPP_ANCHOR_HEAD: the head moves to the target node. */
export async function anchor(
  thread: ThreadContext,
  frame: Frame<'CPP_ANCHOR_HEAD'>,
  identity: Identity,
): Promise<void> {
  const { targetNodeId, expectedVersion } = frame.payload;
  const plan = () => {
    requireNode(thread.graph, targetNodeId);
    checkVersion(thread.graph, expectedVersion);
    return planAnchor(thread.graph, targetNodeId);
  };
  plan();
  await thread.runHooks(operationContext(frame, thread.threadId, identity));
  thread.publishChange(await thread.commit(plan));
}

/** CPP_BRANCH_DELETE (PROTOCOL.md §24.3): a node and its subtree removed; the head inside moves to the parent. */
export async function deleteBranch(
  thread: ThreadContext,
  frame: Frame<'CPP_BRANCH_DELETE'>,
  identity: Identity,
): Promise<void> {
  const { nodeId, expectedVersion } = frame.payload;
  await thread.answer.commitEnded();
  const plan = () => {
    requireNode(thread.graph, nodeId);
    checkVersion(thread.graph, expectedVersion);
    return planBranchDelete(thread.graph, nodeId);
  };
  plan();
  await thread.runHooks(operationContext(frame, thread.threadId, identity));
  thread.publishChange(await thread.commit(plan));
}

/** CPP_THREAD_RENAME: the user's own title; the title the thread already has is a retry, answered with a sync. */
export async function rename(
  thread: ThreadContext,
  frame: Frame<'CPP_THREAD_RENAME'>,
  identity: Identity,
  requester: Subscriber,
): Promise<void> {
  const { title, expectedVersion } = frame.payload;
  if (thread.record.title === title) return thread.sendSync(requester);
  const plan = () => {
    checkVersion(thread.graph, expectedVersion);
    return planRename(thread.graph);
  };
  plan();
  await thread.runHooks(operationContext(frame, thread.threadId, identity));
  thread.publishChange(await thread.commit(plan, { rename: title }));
}

/**
 * CPP_THREAD_DELETE: the thread and everything in it, unless something streams. Every subscriber, on this server
 * and the others, is told and unsubscribed; the frames still queued for the thread, and any later, are NOT_FOUND.
 */
export async function deleteThread(
  thread: ThreadContext,
  frame: Frame<'CPP_THREAD_DELETE'>,
  identity: Identity,
): Promise<void> {
  checkVersion(thread.graph, frame.payload.expectedVersion);
  checkNothingStreams(thread.graph, []);
  await thread.runHooks(operationContext(frame, thread.threadId, identity));
  await thread.store.deleteThread(thread.threadId);
  thread.deleted();
}
