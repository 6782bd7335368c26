import type { Attachment, MessageNode, ToolCall } from '@promethea/cpp-protocol';
import type { ModelAttachment, ModelMessage, ModelToolMessage } from '../model/model-provider.js';
import { deniedResult } from '../tools/answer-steps.js';

/** The bytes of a file, by its SHA-256; undefined when they are no longer kept. */
export type ReadAttachmentBytes = (sha256: string) => Promise<Uint8Array | undefined>;

/** What the model is told of a call that never ended (a halt or a crash caught it): it was not run to its end. */
export const INTERRUPTED_TOOL_RESULT =
  'The tool call was interrupted before it finished, and it will not be run again unless you call it again.';

/**
 * The context a model is given: the branch from the root to the new prompt, never other branches. Interrupted and
 * failed assistant turns keep their partial text; an assistant turn with no text at all says nothing and is left
 * out. An answer that called tools is its steps, as the model made them (docs/PROTOCOL.md §26.2): each step's text
 * and calls, then the calls' results.
 */
export function modelMessages(branch: readonly MessageNode[], readBytes: ReadAttachmentBytes): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const node of branch) {
    if (node.role === 'user') messages.push(userTurn(node, readBytes));
    else messages.push(...answerTurns(node));
  }
  return messages;
}

function answerTurns(node: MessageNode): ModelMessage[] {
  // Most answers called no tool: their text is their one turn. A branch's every answer is read on every prompt.
  if (!node.toolCalls?.length) return node.content.length > 0 ? [{ role: 'assistant', content: node.content }] : [];
  const calls = node.toolCalls.filter(wasAsked);
  const turns: ModelMessage[] = [];
  let start = 0;
  for (const step of [...new Set(calls.map((call) => call.step))].sort((a, b) => a - b)) {
    const own = calls.filter((call) => call.step === step);
    const end = Math.min(node.content.length, Math.max(start, ...own.map((call) => call.offset)));
    const toolCalls = own.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input }));
    turns.push({ role: 'assistant', content: node.content.slice(start, end), toolCalls }, ...own.map(toolResult));
    start = end;
  }
  const rest = node.content.slice(start);
  if (rest.length > 0) turns.push({ role: 'assistant', content: rest });
  return turns;
}

/**
 * Whether the model finished asking for the call: its input is whole. A call cut while its input streamed is left
 * out; an input's JSON object is whole exactly when it parses, as no proper prefix of one does.
 */
function wasAsked(call: ToolCall): boolean {
  if (call.state === 'input-streaming') return false;
  try {
    const input: unknown = JSON.parse(call.input);
    return input !== null && typeof input === 'object' && !Array.isArray(input);
  } catch {
    return false;
  }
}

function toolResult(call: ToolCall): ModelToolMessage {
  const { toolCallId, toolName } = call;
  if (call.state === 'output-available') return { role: 'tool', toolCallId, toolName, content: call.output ?? '' };
  const content =
    call.state === 'output-error'
      ? (call.errorText ?? '')
      : call.state === 'output-denied'
        ? deniedResult(call.approval?.reason)
        : '';
  return { role: 'tool', toolCallId, toolName, content: content || INTERRUPTED_TOOL_RESULT, isError: true };
}

/** A prompt with its files, if it carried any. */
function userTurn(node: MessageNode, readBytes: ReadAttachmentBytes): ModelMessage {
  if (!node.attachments?.length) return { role: 'user', content: node.content };
  return {
    role: 'user',
    content: node.content,
    attachments: node.attachments.map((file) => modelFile(file, readBytes)),
  };
}

/** A node's file as a model is given it: the bytes are read only if the provider asks for them. */
function modelFile({ id, ...file }: Attachment, readBytes: ReadAttachmentBytes): ModelAttachment {
  return {
    ...file,
    bytes: async () => {
      const bytes = await readBytes(file.sha256);
      if (!bytes) throw new Error(`the bytes of attachment ${id} (${file.name}) are no longer kept`);
      return bytes;
    },
  };
}
