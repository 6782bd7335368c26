import { CPPError, ErrorCode, newMessageId, type SiblingAnswer } from '@promethea/cpp-protocol';
import type { ModelCatalog } from '../model/model-catalog.js';
import type { ReceivedLengths } from './cut.js';

/**
 * The models that answer a prompt, a pivot or a regenerate, in the order of their answers (docs/PROTOCOL.md §30.1):
 * those `models` names, or the one `model` names, or the default. Naming both is INVALID_FRAME; a model the server
 * does not offer, UNKNOWN_MODEL.
 */
export function answerModels(catalog: ModelCatalog, fields: { model?: string; models?: readonly string[] }): string[] {
  if (fields.model !== undefined && fields.models !== undefined)
    throw new CPPError(ErrorCode.INVALID_FRAME, 'a frame names either one model (model) or several (models), not both');
  return (fields.models ?? [fields.model]).map((model) => catalog.resolve(model));
}

/** The answers of the models after the first, each with a new node id: `moreAnswers` of a plan, or nothing. */
export function sideBySide(models: readonly string[]): { moreAnswers?: SiblingAnswer[] } {
  if (models.length === 0) return {};
  return { moreAnswers: models.map((model) => ({ assistantNodeId: newMessageId(), model })) };
}

/** The node ids of a plan's answers, the first one's first. */
export function answerIds(assistantNodeId: string, { moreAnswers }: { moreAnswers?: SiblingAnswer[] }): string[] {
  return [assistantNodeId, ...(moreAnswers ?? []).map((answer) => answer.assistantNodeId)];
}

/**
 * What the client had shown of each answer a pivot or a regenerate halts (docs/PROTOCOL.md §30.3): its entry in
 * `siblingsReceived`, else `named` for the answer `namedNodeId` (every answer, when none is named), else nothing,
 * which cuts it at what it was sent.
 */
export function receivedOf(
  named: ReceivedLengths,
  siblingsReceived: readonly SiblingReceived[] | undefined,
  namedNodeId?: string,
): (nodeId: string) => ReceivedLengths {
  return (nodeId) => {
    const entry = siblingsReceived?.find((sibling) => sibling.nodeId === nodeId);
    if (entry) return { content: entry.receivedContentLength, reasoning: entry.receivedReasoningLength };
    return namedNodeId === undefined || namedNodeId === nodeId ? named : {};
  };
}

interface SiblingReceived {
  nodeId: string;
  receivedContentLength?: number | undefined;
  receivedReasoningLength?: number | undefined;
}
