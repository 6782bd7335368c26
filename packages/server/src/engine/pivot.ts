import { CPPError, ErrorCode, newMessageId, planPivotSplice, type ClientFrame } from '@promethea/cpp-protocol';
import type { Cut } from './cut.js';
import type { PivotObservation } from './engine-observer.js';
import { answerIds, answerModels, receivedOf, sideBySide } from './answer-models.js';
import { promptAttachments } from './prompt-attachments.js';
import { authorOf, type Identity } from './identity.js';
import { PivotContext, type PivotRequest } from './pivot-context.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext } from './thread-context.js';
import { checkNothingStreams, checkVersion, isRetry, requireNode } from './thread-guards.js';

/**
 * CPP_PIVOT_INIT (seed spec §4, docs/PROTOCOL.md §11), in the thread's turn: checks → abort and cut
 * (CPP_STREAM_HALTED at once) → spawn (the new model call leaves, its text held) → commit (the cut, the user node,
 * the assistant node, one transaction) → insert (the patch is published, then the new text flows). Each step is
 * the thread's answer's (`answer.ts`), timed and traced by the pivot's observation from the outside.
 *
 * The server's 'pivot' listeners run between the checks and the steps: through their `PivotContext` they may run
 * the two steps themselves and work around them. What they leave undone is done once they settle, so every pivot
 * they let through ends with its new branch streaming. A listener that throws refuses the pivot: the client gets the
 * code of its CPPError (INTERNAL for any other error), and the thread stays as the listener left it — unchanged, or,
 * when it had aborted the stream, with that stream kept, cut, as `interrupted`.
 */
export async function pivot(
  thread: ThreadContext,
  frame: Extract<ClientFrame, { type: 'CPP_PIVOT_INIT' }>,
  identity: Identity,
  requester: Subscriber,
  observation: PivotObservation,
): Promise<void> {
  const {
    activeThreadId,
    receivedContentLength,
    receivedReasoningLength,
    expectedVersion,
    siblingsReceived,
    ...fields
  } = frame.payload;
  const request: PivotRequest = { ...fields, threadId: activeThreadId, receivedContentLength, receivedReasoningLength };
  const { interruptedNodeId, newBranchNodeId, userPrompt } = request;

  // Checks, in §11.1's order: nothing is halted, called or committed before all of them pass.
  thread.limits.checkPrompt(thread.graph, userPrompt, newBranchNodeId, request.models?.length);
  if (await isRetry(thread.graph, thread.store, newBranchNodeId, userPrompt, interruptedNodeId))
    return thread.sendSync(requester);
  checkVersion(thread.graph, expectedVersion);
  requireNode(thread.graph, interruptedNodeId);
  await thread.answer.commitEnded();
  // A pivot names the answer it branches under; answers streaming beside it (several models') halt with it (§30.3).
  const { streams } = thread.generation;
  if (streams.length > 0 && !streams.some((stream) => stream.nodeId === interruptedNodeId)) {
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streams[0]?.nodeId} is streaming in thread ${thread.threadId}; pivot that node`,
    );
  }
  const [model, ...others] = answerModels(thread.models, request);
  const attachments = await promptAttachments(thread.store, activeThreadId, identity, request.attachments);
  const assistantNodeId = newMessageId();
  const moreAnswers = sideBySide(others);

  let cuts = new Map<string, Cut>();
  /** The cuts, the user's new prompt under the cut node, and the new answers under it: one change. */
  const plan = () => {
    checkNothingStreams(thread.graph, [...cuts.keys()]);
    const cut = cuts.get(interruptedNodeId);
    const cutContent = cut ? { cutContent: cut.content, cutReasoning: cut.reasoning } : {};
    const alsoHalted = [...cuts]
      .filter(([nodeId]) => nodeId !== interruptedNodeId)
      .map(([nodeId, { content, reasoning }]) => ({ nodeId, content, reasoning }));
    return planPivotSplice(thread.graph, {
      interruptedNodeId,
      userNodeId: newBranchNodeId,
      userPrompt,
      assistantNodeId,
      model,
      createdAt: Date.now(),
      ...authorOf(identity),
      ...cutContent,
      alsoHalted,
      ...(attachments ? { attachments } : {}),
      ...moreAnswers,
    });
  };
  const { answer } = thread;
  let aborting: Promise<void> | undefined;
  let spawning: Promise<{ assistantNodeId: string }> | undefined;
  // Nothing to abort when the named node does not stream here (case B: the branch grows under a finished answer).
  const abortActiveStream = () =>
    (aborting ??= (async () => {
      if (!thread.generation.stateOf(interruptedNodeId)) return;
      // Abort and cut: the model calls stop, their text is frozen at the cut, CPP_STREAM_HALTED goes out at once.
      const named = { content: receivedContentLength, reasoning: receivedReasoningLength };
      const received = receivedOf(named, siblingsReceived, interruptedNodeId);
      cuts = await observation.step('abort', () => answer.halt(received, 'pivot'));
      if (cuts.size > 0) observation.halted();
    })());
  const spawnSiblingStream = () =>
    (spawning ??= (async () => {
      await abortActiveStream();
      await thread.generation.claim();
      const planned = answer.plan(plan);
      const ids = answerIds(assistantNodeId, moreAnswers);
      // A model that summarises what its window leaves out waits for the summary, made once per branch point.
      const summarising = answer.summarise(planned, ids);
      if (summarising) await summarising;
      // The new answer's model call leaves now, its text held, so that the model works while the change commits.
      const spawned = observation.step('spawn', () => answer.spawn(planned, ids, requester));
      const titling = { prompt: userPrompt, attachments };
      const { change, streams } = await observation.step('commit', () =>
        answer.commitAnswer(plan, planned, spawned, requester, titling),
      );
      // Publish, then the new answers' text flows: clients get the branch before its first chunk.
      observation.step('insert', () => answer.insert(change, streams));
      return { assistantNodeId };
    })());

  await answer.keepingTheCut(async () => {
    await thread.pivotListeners(new PivotContext(request, identity, { abortActiveStream, spawnSiblingStream }));
    await spawnSiblingStream();
  });
}
