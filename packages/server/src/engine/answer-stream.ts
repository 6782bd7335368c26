import {
  type FinishReason,
  type TextPart,
  type TokenUsage,
  type ToolApproval,
  type ToolCall,
  withToolCall,
} from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider } from '../model/model-provider.js';
import { type AnswerPart, type AnswerStepsOptions, answerSteps, type ClientResult } from '../tools/answer-steps.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import type { AnswerOutcome, GenerationObservation, GenerationResult } from './engine-observer.js';
import { ChunkPacer } from './chunk-pacer.js';
import { ModelText } from './model-text.js';

export interface AnswerHooks {
  /** A chunk of one part is about to reach clients; `offset` is that part's length before it. */
  onChunk(part: TextPart, offset: number, delta: string): void;
  /** A tool call began or changed: `call` is the whole call as it is now. */
  onToolCall(call: ToolCall): void;
  /** A piece of a tool call's input is about to reach clients; `offset` is the input's length before it. */
  onToolInput(toolCallId: string, offset: number, delta: string): void;
  /** The stream ended by itself (not after `halt`). */
  onEnd(outcome: AnswerOutcome): void;
  /** The model call is over or abandoned, by its end or a halt: called once. */
  onStopped(): void;
}

/** One part of the node as this generation sent it. */
export interface PartStream {
  /** The part's whole text sent to clients: what the node had when the generation began, and its chunks. */
  text: string;
  /** Where each chunk this generation sent began, ascending. */
  chunkStarts: readonly number[];
}

/** Where a halted generation stopped, each part by itself, and its tool calls as clients were sent them. */
export type HaltPoint = Record<TextPart, PartStream> & { toolCalls: readonly ToolCall[] };

/** The node as the generation begins: empty for a new answer, what it had for a continued one. */
export interface NodeText {
  content: string;
  reasoning: string;
  toolCalls: readonly ToolCall[];
}

/** The tools an answer may call, and who it answers (what its tools are told). */
export interface AnswerTools {
  registry: ToolRegistry;
  threadId: string;
  identity: string;
}

/** Something the stream holds back while paused, in the order it came. */
type Paused = { part: TextPart; text: string } | { apply: () => void };

/**
 * One model call writing one assistant node (the thread's generation, while it streams). Owns the AbortController of that call. The model's deltas reach
 * clients as paced chunks (see `ChunkPacer`), each of one part: the answer's text, or the model's reasoning; text
 * waiting in one part goes out before the other part's first. Once `halt` returns, no further chunk is sent: the
 * text sent so far is frozen, whatever the provider still does on its way out, and text still waiting for its chunk
 * is dropped.
 *
 * A stream starts paused: the call is made at once, but its text and its end wait for `flow`, so that the call can
 * be on its way while the node it writes is committed.
 */
export class AnswerStream {
  private readonly controller = new AbortController();
  private readonly parts: Record<TextPart, { text: string; chunkStarts: number[] }>;
  private halted = false;
  /** Set when the stream ended by itself; the engine may not have committed it yet. */
  outcome: AnswerOutcome | undefined;
  private readonly pacer: ChunkPacer;
  /** The part of the text waiting in the pacer. */
  private pacedPart: TextPart = 'content';
  private readonly modelText: Record<TextPart, ModelText> = { content: new ModelText(), reasoning: new ModelText() };
  private paused = true;
  private readonly pausedParts: Paused[] = [];
  private calls: ToolCall[];
  /** The calls waiting for a person's approval, with what takes the answer to each. */
  private readonly awaitingApproval = new Map<string, (approval: ToolApproval) => void>();
  /** The calls of tools that run on a client, waiting for a client's answer. */
  private readonly awaitingResult = new Map<string, (result: ClientResult) => void>();
  private pausedOutcome: AnswerOutcome | undefined;
  /** Settles when the provider's stream has been left, whichever way. */
  readonly finished: Promise<void>;

  constructor(
    readonly nodeId: string,
    provider: ModelProvider,
    messages: ModelMessage[],
    private readonly hooks: AnswerHooks,
    chunkIntervalMs: number,
    private readonly observation: GenerationObservation,
    tools: AnswerTools,
    initial: NodeText = { content: '', reasoning: '', toolCalls: [] },
    /** The last message is the node's own partial answer, which the model goes on with. */
    continues = false,
  ) {
    this.parts = {
      content: { text: initial.content, chunkStarts: [] },
      reasoning: { text: initial.reasoning, chunkStarts: [] },
    };
    this.calls = [...initial.toolCalls];
    this.pacer = new ChunkPacer(chunkIntervalMs, (delta) => this.send(delta));
    const firstStep = Math.max(-1, ...initial.toolCalls.map((call) => call.step)) + 1;
    const steps: AnswerStepsOptions = {
      provider,
      messages,
      continues,
      signal: this.controller.signal,
      tools: tools.registry,
      approvals: {
        wait: (toolCallId, signal) =>
          new Promise((resolve) => {
            this.awaitingApproval.set(toolCallId, resolve);
            signal.addEventListener('abort', () => this.awaitingApproval.delete(toolCallId), { once: true });
          }),
      },
      clientResults: {
        wait: (toolCallId, signal) =>
          new Promise((resolve) => {
            this.awaitingResult.set(toolCallId, resolve);
            signal.addEventListener('abort', () => this.awaitingResult.delete(toolCallId), { once: true });
          }),
      },
      firstStep,
      threadId: tools.threadId,
      identity: tools.identity,
      text: () => this.writtenText(),
    };
    this.finished = this.run(steps);
  }

  /** The answer's text sent to clients so far. */
  get text(): string {
    return this.parts.content.text;
  }

  /** The reasoning sent to clients so far. */
  get reasoning(): string {
    return this.parts.reasoning.text;
  }

  /** The node's tool calls as clients were sent them. */
  get toolCalls(): readonly ToolCall[] {
    return this.calls;
  }

  /**
   * A person's answer to a call waiting for approval (CPP_TOOL_APPROVAL). False when no call of this answer waits
   * for one under that id (it never did, or was answered, or the answer was halted).
   */
  respondToApproval(toolCallId: string, approval: ToolApproval): boolean {
    const respond = this.awaitingApproval.get(toolCallId);
    const waiting = this.calls.some((call) => call.toolCallId === toolCallId && call.state === 'approval-requested');
    if (!respond || !waiting || this.halted) return false;
    this.awaitingApproval.delete(toolCallId);
    respond(approval);
    return true;
  }

  /**
   * A client's answer to a call of a tool that runs on the client (CPP_TOOL_RESULT). False when no call of this
   * answer waits for one under that id (none of a client's tool, not yet approved, or answered already).
   */
  answerClientCall(toolCallId: string, result: ClientResult): boolean {
    const answer = this.awaitingResult.get(toolCallId);
    const waiting = this.calls.some(
      (call) => call.toolCallId === toolCallId && call.state === 'input-available' && call.runsOn === 'client',
    );
    if (!answer || !waiting || this.halted) return false;
    this.awaitingResult.delete(toolCallId);
    answer(result);
    return true;
  }

  /** The text (and the end, if it came) goes out from now on. */
  flow(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.halted) return;
    for (const paused of this.pausedParts.splice(0)) {
      if ('apply' in paused) paused.apply();
      else this.deliver(paused.part, paused.text);
    }
    if (this.pausedOutcome) this.end(this.pausedOutcome);
  }

  /**
   * Freezes what was sent and aborts the model call. Idempotent. `undefined` when the stream had already ended by
   * itself: then there is nothing to cut, and `outcome` says how it ended.
   *
   * The call is aborted a microtask later, once the caller has sent what the halt decided (CPP_STREAM_HALTED, at
   * once after this returns): an abort runs the provider's listeners synchronously, and aborting a streaming `fetch`
   * tore its request down in 0.24 ms p50 here, in front of the halt. Nothing the call yields meanwhile is sent.
   */
  halt(): HaltPoint | undefined {
    if (this.outcome) return undefined;
    if (!this.halted) {
      this.halted = true;
      queueMicrotask(() => this.controller.abort());
      this.pacer.discard();
      this.observation.ended(this.result({ kind: 'halted' }));
      this.hooks.onStopped();
    }
    return { ...this.parts, toolCalls: this.calls };
  }

  private async run(steps: AnswerStepsOptions): Promise<void> {
    let finishReason: FinishReason = 'stop';
    let usage: TokenUsage | undefined;
    try {
      await answerSteps(steps, (part) => {
        if (this.halted) return;
        switch (part.type) {
          case 'text-delta':
            this.deliver('content', this.modelText.content.take(part.text));
            break;
          case 'reasoning-delta':
            this.deliver('reasoning', this.modelText.reasoning.take(part.text));
            break;
          case 'finish':
            finishReason = part.finishReason;
            usage = part.usage;
            break;
          default:
            this.toolPart(part);
        }
      });
      if (this.halted) return;
      for (const part of ['reasoning', 'content'] as const) this.deliver(part, this.modelText[part].rest());
      this.settle({ kind: 'completed', finishReason, ...(usage ? { usage } : {}) });
    } catch (error) {
      this.settle({ kind: 'failed', error });
    }
  }

  /**
   * A tool call's part. A call sits where the answer's text was when it began (its `offset`), so the text the model
   * wrote before it goes out first, and whatever is held back of it with it.
   */
  private toolPart(part: Exclude<AnswerPart, { type: 'text-delta' | 'reasoning-delta' | 'finish' }>): void {
    if (this.paused) {
      this.pausedParts.push({ apply: () => this.toolPart(part) });
      return;
    }
    if (part.type === 'tool-call-start') {
      this.deliver('content', this.modelText.content.rest());
      this.pacer.flush();
      const { toolCallId, toolName, step, runsOn } = part;
      const offset = this.text.length;
      this.updateCall({
        toolCallId,
        toolName,
        step,
        offset,
        state: 'input-streaming',
        input: '',
        ...(runsOn ? { runsOn } : {}),
      });
      return;
    }
    const call = this.calls.find((held) => held.toolCallId === part.toolCallId);
    if (!call) return;
    if (part.type === 'tool-input-delta') {
      const offset = call.input.length;
      this.calls = withToolCall(this.calls, { ...call, input: call.input + part.delta });
      this.hooks.onToolInput(call.toolCallId, offset, part.delta);
      return;
    }
    // A call that moves on drops the progress it had reported; a progress report keeps the rest.
    const { progress: _previous, ...rest } = call;
    this.updateCall({ ...rest, ...part.update });
  }

  private updateCall(call: ToolCall): void {
    this.calls = withToolCall(this.calls, call);
    this.hooks.onToolCall(call);
  }

  /** The answer's text as far as the model wrote it: sent, waiting for its chunk, or held while the stream is paused. */
  private writtenText(): string {
    let text = this.text;
    if (this.pacedPart === 'content') text += this.pacer.waiting;
    for (const held of this.pausedParts) if ('part' in held && held.part === 'content') text += held.text;
    return text;
  }

  private deliver(part: TextPart, text: string): void {
    if (text.length === 0) return;
    if (this.paused) {
      // Paused text goes out as one chunk per part on `flow`, as it would have, merged, had the interval been long.
      const last = this.pausedParts.at(-1);
      if (last && 'part' in last && last.part === part) last.text += text;
      else this.pausedParts.push({ part, text });
      return;
    }
    if (part !== this.pacedPart) {
      this.pacer.flush();
      this.pacedPart = part;
    }
    this.pacer.push(text);
  }

  private settle(outcome: AnswerOutcome): void {
    if (this.halted) return;
    if (this.paused) this.pausedOutcome = outcome;
    else this.end(outcome);
  }

  private send(delta: string): void {
    const part = this.parts[this.pacedPart];
    const offset = part.text.length;
    const first = this.parts.content.chunkStarts.length + this.parts.reasoning.chunkStarts.length === 0;
    part.chunkStarts.push(offset);
    part.text += delta;
    this.hooks.onChunk(this.pacedPart, offset, delta);
    if (first) this.observation.firstChunk();
  }

  private end(outcome: AnswerOutcome): void {
    this.pacer.flush();
    this.halted = true;
    this.outcome = outcome;
    this.observation.ended(this.result(outcome));
    this.hooks.onStopped();
    this.hooks.onEnd(outcome);
  }

  private result(outcome: GenerationResult['outcome']): GenerationResult {
    return {
      outcome,
      text: this.text,
      chunkCount: this.parts.content.chunkStarts.length + this.parts.reasoning.chunkStarts.length,
    };
  }
}
