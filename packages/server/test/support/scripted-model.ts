import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider, ModelRequest, ModelStreamPart } from '@promethea/cpp-server';

/** How an answer ends after its last chunk: a finish part, or a thrown error (a failing provider). */
export type ScriptedEnding = { finishReason: FinishReason; usage?: TokenUsage } | Error;

/** A delta of the answer's text, or of the model's reasoning. */
export type ScriptedChunk = string | { reasoning: string };

export interface ScriptedAnswer {
  /**
   * The chunks in order, or a function giving chunk `index` and `undefined` where the answer ends (one that never
   * does streams until aborted).
   */
  chunks: readonly ScriptedChunk[] | ((index: number) => ScriptedChunk | undefined);
  /** Default: finish with reason `stop`. */
  ending?: ScriptedEnding;
  /** Overrides the model's `gated` option for this answer. */
  gated?: boolean;
}

export interface ScriptedModelOptions {
  /** When true (the default), every part waits for `call.release()`: the test decides exactly what is streamed when. */
  gated?: boolean;
}

/**
 * One call of the model: the context it was given, its abort signal, and (when gated) the tap that lets its parts
 * through one at a time.
 */
export class ModelCall {
  private allowance: number;
  private wake: (() => void) | undefined;
  /** True while the stream waits for a release (or has ended): every part let through has been taken. */
  private idle = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly messages: ModelMessage[],
    readonly signal: AbortSignal,
    gated: boolean,
    /** The last message is a partial answer to go on with (CPP_CONTINUE). */
    readonly continues = false,
  ) {
    this.allowance = gated ? 0 : Number.POSITIVE_INFINITY;
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  /** Lets `count` more parts (chunks, then the ending) through. */
  release(count = 1): void {
    this.allowance += count;
    this.idle = false;
    this.wake?.();
  }

  /**
   * Settles once the server has taken every part let through so far: it asked for the next one (so it has handled
   * the last one given) and waits, or the answer ended. What the server does with a part on taking it is done then.
   */
  taken(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The stream has left its scripted answer: nothing more will be taken. */
  ended(): void {
    this.becomeIdle();
  }

  /** Lets the rest of the answer through. */
  releaseAll(): void {
    this.release(Number.POSITIVE_INFINITY);
  }

  /** Waits until the next part may go; false once the call is aborted. */
  async turn(): Promise<boolean> {
    while (this.allowance === 0 && !this.signal.aborted) {
      this.becomeIdle();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    this.wake = undefined;
    if (this.signal.aborted) return false;
    this.allowance -= 1;
    return true;
  }

  private becomeIdle(): void {
    this.idle = true;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/**
 * A model provider double that streams a scripted answer and records every call: what context it was given, and
 * whether it was aborted. Answers may contain any text (emoji, to cut between surrogate pairs) and may end by
 * throwing (a provider failure).
 */
export class ScriptedModel implements ModelProvider {
  readonly provider = 'scripted';
  readonly model = 'scripted-model';
  readonly calls: ModelCall[] = [];
  private readonly gated: boolean;
  private waiters: Array<{ index: number; resolve: (call: ModelCall) => void }> = [];

  /** `answer` may depend on the call's index (0 for the first call). */
  constructor(
    private readonly answer: ScriptedAnswer | ((callIndex: number) => ScriptedAnswer),
    options: ScriptedModelOptions = {},
  ) {
    this.gated = options.gated ?? true;
  }

  /** The `index`-th call (0 for the first), once the server has made it. */
  call(index: number): Promise<ModelCall> {
    const made = this.calls[index];
    if (made) return Promise.resolve(made);
    return new Promise((resolve) => this.waiters.push({ index, resolve }));
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const index = this.calls.length;
    const answer = typeof this.answer === 'function' ? this.answer(index) : this.answer;
    const gated = answer.gated ?? this.gated;
    const call = new ModelCall(request.messages, request.signal, gated, request.continues ?? false);
    this.record(index, call);
    try {
      for (let chunkIndex = 0; ; chunkIndex += 1) {
        const chunk = chunkAt(answer.chunks, chunkIndex);
        if (chunk === undefined) break;
        if (!(await call.turn())) return;
        yield typeof chunk === 'string'
          ? { type: 'text-delta', text: chunk }
          : { type: 'reasoning-delta', text: chunk.reasoning };
        // Lets the server's I/O run between parts, as a network stream would.
        if (!gated) await nextTurn();
      }
      if (!(await call.turn())) return;
      const ending = answer.ending ?? { finishReason: 'stop' };
      if (ending instanceof Error) throw ending;
      yield { type: 'finish', ...ending };
    } finally {
      call.ended();
    }
  }

  private record(index: number, call: ModelCall): void {
    this.calls.push(call);
    const ready = this.waiters.filter((waiter) => waiter.index === index);
    this.waiters = this.waiters.filter((waiter) => waiter.index !== index);
    for (const waiter of ready) waiter.resolve(call);
  }
}

function chunkAt(chunks: ScriptedAnswer['chunks'], index: number): ScriptedChunk | undefined {
  return typeof chunks === 'function' ? chunks(index) : chunks[index];
}
