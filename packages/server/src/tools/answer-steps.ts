import {
  type FinishReason,
  newToolCallId,
  storableText,
  type TokenUsage,
  type ToolApproval,
  type ToolCall,
  type ToolProgress,
} from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider, ModelToolCall, ModelToolMessage } from '../model/model-provider.js';
import type { ToolOutcome, ToolRegistry } from './tool-registry.js';

/** A change of one tool call: the fields that change; a call that moves on loses the progress it had reported. */
export type ToolCallUpdate = Pick<ToolCall, 'state'> &
  Partial<Pick<ToolCall, 'input' | 'output' | 'errorText' | 'progress' | 'approval' | 'runsOn'>>;

/** A client's answer to a call of a tool that runs on the client (CPP_TOOL_RESULT). */
export interface ClientResult {
  output?: string;
  errorText?: string;
}

/** Where a call of a tool that runs on a client waits for a client's answer; the answer stream keeps it. */
export interface ClientResultGate {
  /** Resolves with the answer to the call; never, once `signal` aborts (the answer was halted). */
  wait(toolCallId: string, signal: AbortSignal): Promise<ClientResult>;
}

/** Where a call that needs approval waits for a person's answer (CPP_TOOL_APPROVAL); the answer stream keeps it. */
export interface ApprovalGate {
  /** Resolves with the answer to the call; never, once `signal` aborts (the answer was halted). */
  wait(toolCallId: string, signal: AbortSignal): Promise<ToolApproval>;
}

/**
 * What an answer streams: its text and reasoning as a model stream has them, and the life of its tool calls. A call
 * starts (`tool-call-start`), its input streams, then each change of it is a `tool-call-update`.
 */
export type AnswerPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-start'; toolCallId: string; toolName: string; step: number; runsOn?: 'client' }
  | { type: 'tool-input-delta'; toolCallId: string; delta: string }
  | { type: 'tool-call-update'; toolCallId: string; update: ToolCallUpdate }
  | { type: 'finish'; finishReason: FinishReason; usage?: TokenUsage };

export interface AnswerStepsOptions {
  provider: ModelProvider;
  /** The branch's context, as the first model call is given it. */
  messages: ModelMessage[];
  /** The first model call goes on with the partial answer `messages` ends with (CPP_CONTINUE). */
  continues: boolean;
  /** The answer's: aborted by a halt, which ends the model call and every running tool at once. */
  signal: AbortSignal;
  tools: ToolRegistry;
  approvals: ApprovalGate;
  clientResults: ClientResultGate;
  /** Counts the steps of a continued answer on from the ones it had. */
  firstStep: number;
  threadId: string;
  identity: string;
  /**
   * The answer's text as far as the model has written it (the text it continues included), where a step that called
   * tools finds its own text for the next step. The answer keeps it: a second copy of every token held here for the
   * whole answer was as many more strings for the collector to walk, on every answer, though few steps call tools.
   */
  text(): string;
}

/** What the model is told of a call the step limit left unrun. */
const notRun = (maxSteps: number): string =>
  `Not run: the answer reached its limit of ${maxSteps} model calls. Answer with what you have.`;

/**
 * One answer's model calls (docs/PROTOCOL.md §26.3): a model call (a step) streams text and tool calls; when it
 * called tools, they run side by side, their results go back to the model with the step's text and calls, and the
 * next step begins; an answer ends at the first step that calls no tool. The calls' ids are the server's own. The
 * loop ends quietly once `signal` aborts, leaving running calls as they are for the halt to cut.
 *
 * Each part goes to `onPart` as it comes, not through a generator of its own: a layer of async iteration between the
 * model's stream and the answer costs its promises and objects on every token of every answer.
 */
export async function answerSteps(options: AnswerStepsOptions, onPart: (part: AnswerPart) => void): Promise<void> {
  const { provider, signal, tools } = options;
  const messages = [...options.messages];
  let usage: TokenUsage | undefined;
  for (let step = options.firstStep; ; step += 1) {
    const ids = new Map<string, string>();
    const calls: AskedCall[] = [];
    const textStart = options.text().length;
    let finishReason: FinishReason = 'stop';
    const request = {
      messages,
      signal,
      ...(tools.size > 0 ? { tools: tools.definitions } : {}),
      ...(step === options.firstStep && options.continues ? { continues: true } : {}),
    };
    for await (const part of provider.stream(request)) {
      if (signal.aborted) return;
      switch (part.type) {
        case 'text-delta':
        case 'reasoning-delta':
          onPart(part);
          break;
        case 'tool-input-start': {
          const toolCallId = newToolCallId();
          ids.set(part.toolCallId, toolCallId);
          const runsOn = tools.runsOnClient(part.toolName) ? { runsOn: 'client' as const } : {};
          onPart({ type: 'tool-call-start', toolCallId, toolName: part.toolName, step, ...runsOn });
          break;
        }
        case 'tool-input-delta': {
          const toolCallId = ids.get(part.toolCallId);
          if (toolCallId) onPart({ type: 'tool-input-delta', toolCallId, delta: part.delta });
          break;
        }
        case 'tool-call': {
          const toolCallId = ids.get(part.toolCallId);
          if (!toolCallId) break;
          // A call that needs approval waits for it from now on: an answer that comes at once is not lost.
          const approval = (await tools.needsApproval(part.toolName, part.input))
            ? options.approvals.wait(toolCallId, signal)
            : undefined;
          const clientResult = tools.runsOnClient(part.toolName)
            ? options.clientResults.wait(toolCallId, signal)
            : undefined;
          calls.push({
            toolCallId,
            toolName: part.toolName,
            input: part.input,
            ...(approval ? { approval } : {}),
            ...(clientResult ? { clientResult } : {}),
          });
          const state = approval ? 'approval-requested' : 'input-available';
          const runsOn = clientResult ? { runsOn: 'client' as const } : {};
          onPart({ type: 'tool-call-update', toolCallId, update: { state, input: part.input, ...runsOn } });
          break;
        }
        case 'finish':
          finishReason = part.finishReason;
          usage = addUsage(usage, part.usage);
          break;
      }
    }
    if (signal.aborted) return;
    if (calls.length > 0) {
      const asked = calls.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input }));
      messages.push({ role: 'assistant', content: options.text().slice(textStart), toolCalls: asked });
      const ran = step + 1 - options.firstStep < tools.limits.maxSteps;
      const outcomes = ran ? await runCalls(calls, options, onPart) : unrun(calls, tools.limits.maxSteps);
      if (signal.aborted) return;
      if (!ran) for (const [toolCallId, update] of outcomes) onPart({ type: 'tool-call-update', toolCallId, update });
      messages.push(...calls.map((call) => resultMessage(call, outcomes.get(call.toolCallId))));
      if (ran) continue;
    }
    onPart({ type: 'finish', finishReason, ...(usage ? { usage } : {}) });
    return;
  }
}

function unrun(calls: readonly ModelToolCall[], maxSteps: number): Map<string, ToolOutcome> {
  return new Map(calls.map((call) => [call.toolCallId, { state: 'output-error', errorText: notRun(maxSteps) }]));
}

/** A call as the model made it, with the answer it waits for when it needs approval. */
interface AskedCall extends ModelToolCall {
  approval?: Promise<ToolApproval>;
  /** A tool that runs on a client: its answer. */
  clientResult?: Promise<ClientResult>;
}

/** The step's calls, run side by side; their progress and their ends go to `onPart` as they come. */
async function runCalls(
  calls: readonly AskedCall[],
  options: AnswerStepsOptions,
  onPart: (part: AnswerPart) => void,
): Promise<Map<string, ToolOutcome>> {
  const update: UpdateCall = (toolCallId, change) => onPart({ type: 'tool-call-update', toolCallId, update: change });
  const outcomes = new Map<string, ToolOutcome>();
  const runs = calls.map(async ({ toolCallId, toolName, input, approval: answer, clientResult }) => {
    let running = true;
    const reportProgress = (progress: ToolProgress): void => {
      if (running && !options.signal.aborted) {
        update(toolCallId, { state: 'input-available', progress: storableProgress(progress) });
      }
    };
    const context = { signal: options.signal, threadId: options.threadId, identity: options.identity, toolCallId };
    const approval = answer ? await approvalOf(toolCallId, answer, options, update) : undefined;
    if (options.signal.aborted) return;
    const run = (): Promise<ToolOutcome | undefined> =>
      clientResult
        ? clientOutcomeOf(clientResult, options)
        : options.tools.run(toolName, input, { ...context, reportProgress });
    const outcome = approval === undefined || approval.state === 'approved' ? await run() : approval;
    running = false;
    if (!outcome) return;
    outcomes.set(toolCallId, outcome);
    update(toolCallId, outcome);
  });
  await Promise.all(runs);
  return outcomes;
}

/** Tells the answer of a change of one of its calls. */
type UpdateCall = (toolCallId: string, update: ToolCallUpdate) => void;

/**
 * A call that needs approval waits for it (`approval-requested`), at most the approval timeout: approved, it goes on
 * to run (`input-available`, with the approval); denied or unanswered, it ends without running.
 */
async function approvalOf(
  toolCallId: string,
  answer: Promise<ToolApproval>,
  options: AnswerStepsOptions,
  update: UpdateCall,
): Promise<{ state: 'approved' } | ToolOutcome> {
  const { approvalTimeoutMs } = options.tools.limits;
  let timer: NodeJS.Timeout | undefined;
  const unanswered = new Promise<ToolOutcome>((resolve) => {
    const errorText = `Not run: no one approved or denied the call within ${approvalTimeoutMs} ms.`;
    timer = setTimeout(() => resolve({ state: 'output-error', errorText }), approvalTimeoutMs);
  });
  // A halt ends the wait: the caller sees its signal aborted and keeps the call as the halt cut it.
  const halted = new Promise<ToolOutcome>((resolve) =>
    options.signal.addEventListener('abort', () => resolve({ state: 'output-error', errorText: '' }), { once: true }),
  );
  const answered = answer.then((approval): { state: 'approved' } | ToolOutcome => {
    if (!approval.approved) return { state: 'output-denied', approval };
    update(toolCallId, { state: 'input-available', approval });
    return { state: 'approved' };
  });
  try {
    return await Promise.race([answered, unanswered, halted]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A call of a tool that runs on a client, once it may run: the first client's answer, or, without one within the
 * call timeout, an error; nothing once the answer is halted.
 */
async function clientOutcomeOf(
  result: Promise<ClientResult>,
  options: AnswerStepsOptions,
): Promise<ToolOutcome | undefined> {
  const { timeoutMs } = options.tools.limits;
  let timer: NodeJS.Timeout | undefined;
  const unanswered = new Promise<ToolOutcome>((resolve) => {
    const errorText = `No client answered the call within ${timeoutMs} ms: none that runs this tool may be open.`;
    timer = setTimeout(() => resolve({ state: 'output-error', errorText }), timeoutMs);
  });
  const halted = new Promise<undefined>((resolve) =>
    options.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  try {
    return await Promise.race([result.then((answer) => options.tools.clientOutcome(answer)), unanswered, halted]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the model is told of a call: its output, or why there is none. */
function resultMessage(call: ModelToolCall, outcome: ToolOutcome | undefined): ModelToolMessage {
  const { toolCallId, toolName } = call;
  if (outcome?.state === 'output-available') return { role: 'tool', toolCallId, toolName, content: outcome.output };
  return { role: 'tool', toolCallId, toolName, content: withoutOutput(outcome), isError: true };
}

/** Why a call gave no output, as the model is told (docs/PROTOCOL.md §26.2). */
export function withoutOutput(outcome: Exclude<ToolOutcome, { state: 'output-available' }> | undefined): string {
  if (outcome?.state === 'output-error') return outcome.errorText;
  if (outcome?.state === 'output-denied') return deniedResult(outcome.approval.reason);
  return 'The tool call was interrupted before it finished.';
}

/** What the model is told of a call a person denied. */
export function deniedResult(reason: string | undefined): string {
  return `The person denied this tool call, and it did not run.${reason ? ` Their reason: ${reason}` : ''}`;
}

/** Progress as clients are sent it: finite numbers, and a message every store holds as it is (§3.3). */
function storableProgress({ progress, total, message }: ToolProgress): ToolProgress {
  const finite = (value: number | undefined): value is number => typeof value === 'number' && Number.isFinite(value);
  return {
    progress: finite(progress) ? Math.max(0, progress) : 0,
    ...(finite(total) ? { total: Math.max(0, total) } : {}),
    ...(typeof message === 'string' ? { message: storableText(message) } : {}),
  };
}

function addUsage(sum: TokenUsage | undefined, step: TokenUsage | undefined): TokenUsage | undefined {
  if (!step) return sum;
  if (!sum) return step;
  const total: TokenUsage = {};
  for (const key of ['inputTokens', 'outputTokens'] as const) {
    if (sum[key] !== undefined || step[key] !== undefined) total[key] = (sum[key] ?? 0) + (step[key] ?? 0);
  }
  return total;
}
