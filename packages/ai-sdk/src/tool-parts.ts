import {
  isFinalToolCallState,
  partText,
  type MessageNode,
  type ToolCall,
  type ToolCallState,
} from '@promethea/cpp-protocol';
import type { UIMessage } from 'ai';
import type { AnswerStream } from './answer-stream.js';

/**
 * What an interrupted call (PROTOCOL.md §26.4) shows as: the AI SDK has no such state, so it is an `output-error`
 * with this text.
 */
export const INTERRUPTED_TEXT =
  'Interrupted: the answer was halted while this call was going on; it will not run again.';

/** How much of one answer a page has been shown: its texts' lengths, its last step, and each call's state. */
export interface AnswerView {
  content: number;
  reasoning: number;
  step: number;
  calls: Map<string, { state: ToolCallState; input: number }>;
}

export function emptyView(): AnswerView {
  return { content: 0, reasoning: 0, step: 0, calls: new Map() };
}

/**
 * What a page shows of an answer it got as `message`: its text and reasoning parts, and its tool parts, whose states
 * map back to CPP's (an `approval-responded` call still waits for the server to take the answer).
 */
export function viewOfMessage(message: UIMessage, node: MessageNode): AnswerView {
  const view = emptyView();
  for (const part of message.parts) {
    if (part.type === 'step-start') view.step += 1;
    else if (part.type === 'text') view.content += part.text.length;
    else if (part.type === 'reasoning') view.reasoning += part.text.length;
    else if (part.type.startsWith('tool-') && 'toolCallId' in part) {
      const call = node.toolCalls?.find(({ toolCallId }) => toolCallId === part.toolCallId);
      if (!call) continue;
      view.step = Math.max(view.step, call.step);
      const state: ToolCallState = part.state === 'approval-responded' ? 'approval-requested' : part.state;
      view.calls.set(call.toolCallId, { state, input: call.input.length });
    }
  }
  return view;
}

/**
 * Writes to `stream` what `node` holds beyond what `view` says the page was shown, and records it there: the
 * reasoning, then the text and the calls in the order the model made them (a call's text before it), each call's
 * changes of state as the AI SDK's tool chunks, and a `start-step` where a new model call begins.
 */
export function showNode(stream: AnswerStream, node: MessageNode, view: AnswerView): void {
  const reasoning = partText(node, 'reasoning');
  stream.reasoning(reasoning.slice(view.reasoning));
  view.reasoning = reasoning.length;
  const calls = node.toolCalls ?? [];
  for (const call of calls) {
    let shown = view.calls.get(call.toolCallId);
    if (!shown) {
      showText(stream, node, view, call.offset);
      if (call.step > view.step) {
        stream.step();
        view.step = call.step;
      }
      stream.tool({
        type: 'tool-input-start',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        providerExecuted: call.runsOn !== 'client',
      });
      shown = { state: 'input-streaming', input: 0 };
      view.calls.set(call.toolCallId, shown);
    }
    showCall(stream, call, shown);
  }
  showText(stream, node, view, node.content.length);
}

/** Whether text after the calls of `step` that `made` says were made before it begins the next step. */
export function startsStep(calls: readonly ToolCall[], step: number, made: (call: ToolCall) => boolean): boolean {
  const stepCalls = calls.filter((call) => call.step === step);
  return stepCalls.length > 0 && stepCalls.every((call) => made(call) && isFinalToolCallState(call.state));
}

/**
 * Whether the answer waits for nothing but the page: for calls to approve, or calls of client tools this client does
 * not run, that `answered` (the calls the page has just answered) does not name.
 */
export function waitsOnPage(
  node: MessageNode,
  runsItself: (toolName: string) => boolean,
  answered: ReadonlySet<string>,
): boolean {
  const going = (node.toolCalls ?? []).filter((call) => !isFinalToolCallState(call.state));
  return (
    going.length > 0 &&
    going.every(
      (call) =>
        !answered.has(call.toolCallId) &&
        (call.state === 'approval-requested' ||
          (call.state === 'input-available' && call.runsOn === 'client' && !runsItself(call.toolName))),
    )
  );
}

/** A kept call as the AI SDK's tool part, for a message built from the thread. */
export function toolPartOf(call: ToolCall): UIMessage['parts'][number] {
  const base = {
    type: `tool-${call.toolName}` as const,
    toolCallId: call.toolCallId,
    providerExecuted: call.runsOn !== 'client',
  };
  const input = parseInput(call.input);
  const approved = call.approval?.approved ? { approval: { id: call.toolCallId, approved: true as const } } : {};
  switch (call.state) {
    case 'input-streaming':
      return { ...base, state: 'input-streaming', input, rawInput: call.input };
    case 'approval-requested':
      return { ...base, state: 'approval-requested', input, approval: { id: call.toolCallId } };
    case 'input-available':
      return { ...base, state: 'input-available', input };
    case 'output-available':
      return { ...base, state: 'output-available', input, output: call.output, ...approved };
    case 'output-denied':
      return { ...base, state: 'output-denied', input, approval: { id: call.toolCallId, approved: false } };
    default:
      return { ...base, state: 'output-error', input, rawInput: call.input, errorText: errorTextOf(call) };
  }
}

/**
 * The answer's text up to `end`. Text after the calls of the last step shown, once they have all ended, is the next
 * model call's: the model was given their results first (PROTOCOL.md §26.3).
 */
function showText(stream: AnswerStream, node: MessageNode, view: AnswerView, end: number): void {
  if (end <= view.content) return;
  if (startsStep(node.toolCalls ?? [], view.step, (call) => view.calls.has(call.toolCallId))) {
    stream.step();
    view.step += 1;
  }
  stream.text(node.content.slice(view.content, end));
  view.content = end;
}

/** A call's changes since the page was shown `shown`, as tool chunks. */
function showCall(stream: AnswerStream, call: ToolCall, shown: { state: ToolCallState; input: number }): void {
  const { toolCallId, toolName } = call;
  const providerExecuted = call.runsOn !== 'client';
  if (shown.state === 'input-streaming') {
    if (call.state === 'input-streaming') {
      if (call.input.length > shown.input)
        stream.tool({ type: 'tool-input-delta', toolCallId, inputTextDelta: call.input.slice(shown.input) });
      shown.input = call.input.length;
      return;
    }
    const input = parseInput(call.input);
    // A call cut while its input streamed never had a whole input: it only ends.
    if (input !== undefined || call.state !== 'interrupted')
      stream.tool({
        type: 'tool-input-available',
        toolCallId,
        toolName,
        input,
        // Only a call the page is to run now goes to useChat's onToolCall.
        providerExecuted: providerExecuted || call.state !== 'input-available',
      });
  }
  if (call.state === 'approval-requested' && shown.state !== 'approval-requested')
    stream.tool({ type: 'tool-approval-request', approvalId: toolCallId, toolCallId });
  if (call.state === 'input-available' && shown.state === 'approval-requested')
    stream.tool({
      type: 'tool-input-available',
      toolCallId,
      toolName,
      input: parseInput(call.input),
      providerExecuted,
    });
  if (call.state !== shown.state) {
    if (call.state === 'output-available')
      stream.tool({ type: 'tool-output-available', toolCallId, output: call.output, providerExecuted });
    else if (call.state === 'output-denied') stream.tool({ type: 'tool-output-denied', toolCallId });
    else if (call.state === 'output-error' || call.state === 'interrupted')
      stream.tool({ type: 'tool-output-error', toolCallId, errorText: errorTextOf(call), providerExecuted });
  }
  shown.state = call.state;
  shown.input = call.input.length;
}

function errorTextOf(call: ToolCall): string {
  return call.state === 'interrupted' ? INTERRUPTED_TEXT : (call.errorText ?? '');
}

/** A call's input as the object the model wrote; none while it is not whole. */
function parseInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return undefined;
  }
}
