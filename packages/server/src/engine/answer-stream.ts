import type { FinishReason, TokenUsage } from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider } from '../model/model-provider.js';
import type { AnswerOutcome, GenerationObservation, GenerationResult } from './engine-observer.js';
import { ChunkPacer } from './chunk-pacer.js';
import { ModelText } from './model-text.js';

export interface AnswerHooks {
  /** A chunk is about to reach clients; `offset` is the text's length before it. */
  onChunk(offset: number, delta: string): void;
  /** The stream ended by itself (not after `halt`). */
  onEnd(outcome: AnswerOutcome): void;
  /** The model call is over or abandoned, by its end or a halt: called once. */
  onStopped(): void;
}

export interface HaltPoint {
  /** Everything that was sent to clients. */
  content: string;
  /** Where each chunk sent began, ascending. */
  chunkStarts: readonly number[];
}

/**
 * One model call writing one assistant node (the thread's generation, while it streams). Owns the AbortController
 * of that call. The model's deltas reach
 * clients as paced chunks (see `ChunkPacer`). Once `halt` returns, no further chunk is sent: the text sent so far
 * is frozen, whatever the provider still does on its way out, and text still waiting for its chunk is dropped.
 *
 * A stream starts paused: the call is made at once, but its text and its end wait for `flow`, so that the call can
 * be on its way while the node it writes is committed.
 */
export class AnswerStream {
  private readonly controller = new AbortController();
  private content = '';
  private readonly chunkStarts: number[] = [];
  private halted = false;
  /** Set when the stream ended by itself; the engine may not have committed it yet. */
  outcome: AnswerOutcome | undefined;
  private readonly pacer: ChunkPacer;
  private readonly modelText = new ModelText();
  private paused = true;
  private pausedText = '';
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
  ) {
    this.pacer = new ChunkPacer(chunkIntervalMs, (delta) => this.send(delta));
    this.finished = this.run(provider, messages);
  }

  /** The text sent to clients so far. */
  get text(): string {
    return this.content;
  }

  /** The text (and the end, if it came) goes out from now on. */
  flow(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.halted) return;
    this.pacer.push(this.pausedText);
    this.pausedText = '';
    if (this.pausedOutcome) this.end(this.pausedOutcome);
  }

  /**
   * Aborts the model call and freezes what was sent. Idempotent. `undefined` when the stream had already ended by
   * itself: then there is nothing to cut, and `outcome` says how it ended.
   */
  halt(): HaltPoint | undefined {
    if (this.outcome) return undefined;
    if (!this.halted) {
      this.halted = true;
      this.controller.abort();
      this.pacer.discard();
      this.observation.ended(this.result({ kind: 'halted' }));
      this.hooks.onStopped();
    }
    return { content: this.content, chunkStarts: this.chunkStarts };
  }

  private async run(provider: ModelProvider, messages: ModelMessage[]): Promise<void> {
    let finishReason: FinishReason = 'stop';
    let usage: TokenUsage | undefined;
    try {
      for await (const part of provider.stream({ messages, signal: this.controller.signal })) {
        if (this.halted) return;
        if (part.type === 'text-delta') this.deliver(this.modelText.take(part.text));
        else if (part.type === 'finish') {
          finishReason = part.finishReason;
          usage = part.usage;
        }
      }
      const rest = this.modelText.rest();
      if (rest) this.deliver(rest);
      this.settle({ kind: 'completed', finishReason, ...(usage ? { usage } : {}) });
    } catch (error) {
      this.settle({ kind: 'failed', error });
    }
  }

  private deliver(text: string): void {
    if (this.paused) this.pausedText += text;
    else this.pacer.push(text);
  }

  private settle(outcome: AnswerOutcome): void {
    if (this.halted) return;
    if (this.paused) this.pausedOutcome = outcome;
    else this.end(outcome);
  }

  private send(delta: string): void {
    const offset = this.content.length;
    this.chunkStarts.push(offset);
    this.content += delta;
    this.hooks.onChunk(offset, delta);
    if (offset === 0) this.observation.firstChunk();
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
    return { outcome, text: this.content, chunkCount: this.chunkStarts.length };
  }
}
