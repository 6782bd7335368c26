import {
  CPPError,
  ErrorCode,
  continuedAnswer,
  getNode,
  newMessageId,
  planContinue,
  planPrompt,
  planRegenerate,
  regeneratedPrompt,
  type ClientFrame,
} from '@promethea/cpp-protocol';
import type { Cut } from './cut.js';
import { answerIds, answerModels, receivedOf, sideBySide } from './answer-models.js';
import { authorOf, type Identity } from './identity.js';
import { operationContext } from './operation-context.js';
import { promptAttachments } from './prompt-attachments.js';
import type { Subscriber } from './subscriber.js';
import type { ThreadContext } from './thread-context.js';
import { checkNothingStreams, checkVersion, isAnswerRetry, isRetry, requireNode } from './thread-guards.js';

type Frame<Type extends ClientFrame['type']> = Extract<ClientFrame, { type: Type }>;

/**
 * CPP_PROMPT, in the thread's turn: checks → hooks → spawn (the model call leaves, its text held) → commit (the user
 * node and its answer, one transaction) → insert (the patch is published, then the text flows): `ThreadAnswer.start`.
 */
export async function prompt(
  thread: ThreadContext,
  frame: Frame<'CPP_PROMPT'>,
  identity: Identity,
  requester: Subscriber,
): Promise<void> {
  const { activeThreadId: threadId, userPrompt, newNodeId, parentNodeId, expectedVersion } = frame.payload;
  thread.limits.checkPrompt(thread.graph, userPrompt, newNodeId, frame.payload.models?.length);
  if (await isRetry(thread.graph, thread.store, newNodeId, userPrompt, parentNodeId)) return thread.sendSync(requester);
  checkVersion(thread.graph, expectedVersion);
  await thread.answer.commitEnded();
  const streaming = thread.generation.stream;
  if (streaming)
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streaming.nodeId} is streaming in thread ${thread.threadId}; pivot it or stop it first`,
    );
  const [model, ...others] = answerModels(thread.models, frame.payload);
  if (parentNodeId !== undefined && parentNodeId !== null) requireNode(thread.graph, parentNodeId);
  const attachments = await promptAttachments(thread.store, threadId, identity, frame.payload.attachments);
  await thread.runHooks(operationContext(frame, threadId, identity, model));
  const assistantNodeId = newMessageId();
  const moreAnswers = sideBySide(others);
  await thread.generation.claim();
  const plan = () => {
    checkVersion(thread.graph, expectedVersion);
    checkNothingStreams(thread.graph, []);
    return planPrompt(thread.graph, {
      userNodeId: newNodeId,
      userPrompt,
      assistantNodeId,
      model,
      createdAt: Date.now(),
      ...authorOf(identity),
      parentNodeId,
      ...(attachments ? { attachments } : {}),
      ...moreAnswers,
    });
  };
  await thread.answer.start(plan, answerIds(assistantNodeId, moreAnswers), requester, {
    prompt: userPrompt,
    attachments,
  });
}

/**
 * CPP_REGENERATE (PROTOCOL.md §24.1), in the thread's turn: checks → hooks → halt the user node's streaming answer, if
 * any (CPP_STREAM_HALTED at once) → spawn → commit (the cut and the new answer beside it) → insert.
 */
export async function regenerate(
  thread: ThreadContext,
  frame: Frame<'CPP_REGENERATE'>,
  identity: Identity,
  requester: Subscriber,
): Promise<void> {
  const {
    activeThreadId: threadId,
    userNodeId,
    newNodeId,
    receivedContentLength,
    receivedReasoningLength,
    siblingsReceived,
    expectedVersion,
  } = frame.payload;
  thread.limits.checkRoom(thread.graph, newNodeId, frame.payload.models?.length ?? 1);
  if (await isAnswerRetry(thread.graph, thread.store, newNodeId, userNodeId)) return thread.sendSync(requester);
  checkVersion(thread.graph, expectedVersion);
  const userNode = regeneratedPrompt(thread.graph, userNodeId);
  const [model, ...others] = answerModels(thread.models, frame.payload);
  await thread.answer.commitEnded();
  const halting = thread.generation.stream;
  if (halting && getNode(thread.graph, halting.nodeId)?.parentId !== userNode.id) {
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${halting.nodeId} is streaming in thread ${thread.threadId}; stop it first`,
    );
  }
  await thread.runHooks(operationContext(frame, threadId, identity, model));
  // Every answer of the user node that streams is halted, each at what the client had shown of it (§30.3).
  const received = receivedOf({ content: receivedContentLength, reasoning: receivedReasoningLength }, siblingsReceived);
  const cuts = halting ? await thread.answer.halt(received, 'regenerate') : new Map<string, Cut>();
  const moreAnswers = sideBySide(others);
  await thread.answer.keepingTheCut(async () => {
    await thread.generation.claim();
    const plan = () => {
      checkNothingStreams(thread.graph, [...cuts.keys()]);
      const halted = [...cuts].map(([nodeId, cut]) => ({ nodeId, content: cut.content, reasoning: cut.reasoning }));
      return planRegenerate(thread.graph, {
        userNodeId: userNode.id,
        assistantNodeId: newNodeId,
        model,
        createdAt: Date.now(),
        halted,
        ...moreAnswers,
      });
    };
    await thread.answer.start(plan, answerIds(newNodeId, moreAnswers), requester, {
      prompt: userNode.content,
      attachments: userNode.attachments,
    });
  });
}

/**
 * CPP_CONTINUE (PROTOCOL.md §24.4), in the thread's turn: checks → hooks → spawn → commit (the same node streaming
 * again) → insert, its text going on from where it stopped. A continue naming a node that streams is a retry,
 * answered with a sync.
 */
export async function continueAnswer(
  thread: ThreadContext,
  frame: Frame<'CPP_CONTINUE'>,
  identity: Identity,
  requester: Subscriber,
): Promise<void> {
  const { nodeId, expectedVersion } = frame.payload;
  thread.limits.checkContinue(thread.graph, nodeId);
  const node = requireNode(thread.graph, nodeId);
  if (node.status === 'streaming') return thread.sendSync(requester);
  checkVersion(thread.graph, expectedVersion);
  continuedAnswer(thread.graph, node.id);
  const { models } = thread;
  const model = models.resolve(
    frame.payload.model ?? (node.model !== undefined && models.offers(node.model) ? node.model : undefined),
  );
  await thread.answer.commitEnded();
  const streaming = thread.generation.stream;
  if (streaming)
    throw new CPPError(
      ErrorCode.THREAD_BUSY,
      `node ${streaming.nodeId} is streaming in thread ${thread.threadId}; pivot it or stop it first`,
    );
  await thread.runHooks(operationContext(frame, thread.threadId, identity, model));
  await thread.generation.claim();
  const plan = () => {
    checkVersion(thread.graph, expectedVersion);
    checkNothingStreams(thread.graph, []);
    return planContinue(thread.graph, { nodeId: node.id, model });
  };
  await thread.answer.start(plan, [node.id], requester, {
    prompt: getNode(thread.graph, node.parentId ?? '')?.content ?? '',
  });
}
