// Apart from node.ts and its schemas, as text-parts.ts is: the client's mirror uses these without zod.

/**
 * The life of a tool call inside an assistant node (docs/PROTOCOL.md §26): its input streams, then it runs, then it
 * ends with an output or an error; a call the halt of its node (pivot, stop, regenerate, shutdown, crash) caught
 * before it ended is `interrupted`, and is never run again.
 */
export const TOOL_CALL_STATES = [
  'input-streaming',
  'approval-requested',
  'input-available',
  'output-available',
  'output-error',
  'output-denied',
  'interrupted',
] as const;

export type ToolCallState = (typeof TOOL_CALL_STATES)[number];

/** The states a call ends in; every other state is a call still going on. */
const FINAL_STATES: ReadonlySet<ToolCallState> = new Set([
  'output-available',
  'output-error',
  'output-denied',
  'interrupted',
]);

/** How far a running tool says it has got (MCP's progress notification): `total`, when known, is the end. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface ToolCall {
  toolCallId: string;
  toolName: string;
  /** The model call of the answer (0, 1, …) that made it; calls of one step ran side by side. */
  step: number;
  /** The length of the node's content when the call was made: where it sits in the answer's text. */
  offset: number;
  state: ToolCallState;
  /** The input's JSON text as the model wrote it; while `input-streaming`, what has streamed so far. */
  input: string;
  /** `output-available`: what the tool returned, as text. */
  output?: string;
  /** `output-error`: why the call gave no output. */
  errorText?: string;
  /** `input-available`: the tool's last progress report, if it reports any. */
  progress?: ToolProgress;
  /** A call that waited for approval: whether it was given, and the reason given with it. */
  approval?: ToolApproval;
  /** `client`: a client runs the tool and answers with CPP_TOOL_RESULT (§26.10); absent: the server runs it. */
  runsOn?: 'client';
}

/** A person's answer to a call that waited for approval (CPP_TOOL_APPROVAL). */
export interface ToolApproval {
  approved: boolean;
  reason?: string;
}

export function isFinalToolCallState(state: ToolCallState): boolean {
  return FINAL_STATES.has(state);
}

/**
 * The tool calls a halted node keeps when its content is cut at `contentLength`: the calls made within the kept text
 * (at an offset up to the cut), those still going on marked `interrupted` (without the progress they had reported);
 * calls made after the text the person saw are dropped. The same rule recovers a node a crash left streaming.
 */
export function cutToolCalls(calls: readonly ToolCall[], contentLength: number): ToolCall[] {
  return calls
    .filter((call) => call.offset <= contentLength)
    .map((call) => {
      if (isFinalToolCallState(call.state)) return call;
      const { progress: _dropped, ...rest } = call;
      return { ...rest, state: 'interrupted' };
    });
}

/** A node's calls with `call` in place of the call of its id, or after them when it is new. */
export function withToolCall(calls: readonly ToolCall[] | undefined, call: ToolCall): ToolCall[] {
  const list = [...(calls ?? [])];
  const index = list.findIndex((held) => held.toolCallId === call.toolCallId);
  if (index === -1) list.push(call);
  else list[index] = call;
  return list;
}
