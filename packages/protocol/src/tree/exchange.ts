import type { Attachment } from '../attachment.js';
import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import type { MessageNode } from '../node.js';
import type { GraphDraft } from './graph-draft.js';

/** What a prompt adds: the user's node and the id of the assistant node that will answer it. */
export interface ExchangeInput {
  userNodeId: string;
  userPrompt: string;
  /** The files the prompt carries, in the order it named them; absent or empty: none. */
  attachments?: readonly Attachment[];
  assistantNodeId: string;
  /** The model that will write the answer, recorded on the assistant node. */
  model?: string;
  /** The proven identity that sent the prompt, recorded on the user node. */
  authorDid?: string;
  createdAt: number;
  /**
   * The answers of further models, streaming beside the first as its next siblings, in this order (docs/PROTOCOL.md
   * §30); the head stays on the first.
   */
  moreAnswers?: readonly SiblingAnswer[];
}

/** One more model's answer to the same prompt: the id of its assistant node and the model that writes it. */
export interface SiblingAnswer {
  assistantNodeId: string;
  model?: string;
}

/**
 * Adds a user node under `parentId` (the root when the thread is empty) and a streaming assistant node under it,
 * and moves the head to the assistant node. Shared by a plain prompt and by a pivot's branch.
 */
export function addExchange(draft: GraphDraft, parentId: string | null, input: ExchangeInput): void {
  if (
    input.userNodeId === input.assistantNodeId ||
    input.moreAnswers?.some((answer) => answer.assistantNodeId === input.userNodeId)
  )
    throw new CPPError(ErrorCode.CONFLICT, 'user and assistant node ids must differ');
  const user: MessageNode = {
    id: input.userNodeId,
    parentId,
    childrenIds: [],
    role: 'user',
    content: input.userPrompt,
    status: 'completed',
    createdAt: input.createdAt,
  };
  if (input.attachments?.length) user.attachments = input.attachments.map((attachment) => ({ ...attachment }));
  if (input.authorDid !== undefined) user.authorDid = input.authorDid;
  draft.insert(user);
  addAnswer(draft, input.userNodeId, input);
}

/** What an answer needs: the id of its assistant node, and the model that writes it (and those beside it). */
export type AnswerInput = Pick<ExchangeInput, 'assistantNodeId' | 'model' | 'createdAt' | 'moreAnswers'>;

/**
 * Adds a streaming assistant node under the user node `parentId`, then one for each of `moreAnswers` after it, and
 * moves the head to the first.
 */
export function addAnswer(draft: GraphDraft, parentId: string, input: AnswerInput): void {
  for (const answer of [input, ...(input.moreAnswers ?? [])]) {
    const assistant: MessageNode = {
      id: answer.assistantNodeId,
      parentId,
      childrenIds: [],
      role: 'assistant',
      content: '',
      status: 'streaming',
      createdAt: input.createdAt,
    };
    if (answer.model !== undefined) assistant.model = answer.model;
    draft.insert(assistant);
  }
  draft.setHead(input.assistantNodeId);
}
