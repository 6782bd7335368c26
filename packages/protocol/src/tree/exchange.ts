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
}

/**
 * Adds a user node under `parentId` (the root when the thread is empty) and a streaming assistant node under it,
 * and moves the head to the assistant node. Shared by a plain prompt and by a pivot's branch.
 */
export function addExchange(draft: GraphDraft, parentId: string | null, input: ExchangeInput): void {
  if (input.userNodeId === input.assistantNodeId)
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

/** What an answer needs: the id of its assistant node, and the model that writes it. */
export type AnswerInput = Pick<ExchangeInput, 'assistantNodeId' | 'model' | 'createdAt'>;

/** Adds a streaming assistant node under the user node `parentId` and moves the head to it. */
export function addAnswer(draft: GraphDraft, parentId: string, input: AnswerInput): void {
  const assistant: MessageNode = {
    id: input.assistantNodeId,
    parentId,
    childrenIds: [],
    role: 'assistant',
    content: '',
    status: 'streaming',
    createdAt: input.createdAt,
  };
  if (input.model !== undefined) assistant.model = input.model;
  draft.insert(assistant);
  draft.setHead(input.assistantNodeId);
}
