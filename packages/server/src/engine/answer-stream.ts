import type { FinishReason, TextPart, TokenUsage } from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider } from '../model/model-provider.js';
import type { AnswerOutcome, GenerationObservation, GenerationResult } from './engine-observer.js';
import { ChunkPacer } from './chunk-pacer.js';
import { ModelText } from './model-text.js';

export interface AnswerHooks {
  /** A chunk of one part is about to reach clients; `offset` is that part's length before it. */
  onChunk(part: TextPart, offset: number, delta: string): void;
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

/** Where a halted generation stopped, each part by itself. */
export type HaltPoint = Record<TextPart, PartStream>;

/** The node's text when the generation begins: empty for a new answer, what it had for a continued one. */
export interface NodeText {
  content: string;
  reasoning: string;
}

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
  private readonly pausedText: Array<[TextPart, string]> = [];
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
    initial: NodeText = { content: '', reasoning: '' },
    /** The last message is the node's own partial answer, which the model goes on with. */
    continues = false,
  ) {
    this.parts = {
      content: { text: initial.content, chunkStarts: [] },
      reasoning: { text: initial.reasoning, chunkStarts: [] },
    };
    this.pacer = new ChunkPacer(chunkIntervalMs, (delta) => this.send(delta));
    this.finished = this.run(provider, messages, continues);
  }

  /** The answer's text sent to clients so far. */
  get text(): string {
    return this.parts.content.text;
  }

  /** The reasoning sent to clients so far. */
  get reasoning(): string {
    return this.parts.reasoning.text;
  }

  /** The text (and the end, if it came) goes out from now on. */
  flow(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.halted) return;
    for (const [part, text] of this.pausedText.splice(0)) this.deliver(part, text);
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
    return this.parts;
  }

  private async run(provider: ModelProvider, messages: ModelMessage[], continues: boolean): Promise<void> {
    let finishReason: FinishReason = 'stop';
    let usage: TokenUsage | undefined;
    try {
      const request = { messages, signal: this.controller.signal, ...(continues ? { continues } : {}) };
      for await (const part of provider.stream(request)) {
        if (this.halted) return;
        if (part.type === 'text-delta') this.deliver('content', this.modelText.content.take(part.text));
        else if (part.type === 'reasoning-delta') this.deliver('reasoning', this.modelText.reasoning.take(part.text));
        else if (part.type === 'finish') {
          finishReason = part.finishReason;
          usage = part.usage;
        }
      }
      for (const part of ['reasoning', 'content'] as const) this.deliver(part, this.modelText[part].rest());
      this.settle({ kind: 'completed', finishReason, ...(usage ? { usage } : {}) });
    } catch (error) {
      this.settle({ kind: 'failed', error });
    }
  }

  private deliver(part: TextPart, text: string): void {
    if (text.length === 0) return;
    if (this.paused) {
      // Paused text goes out as one chunk per part on `flow`, as it would have, merged, had the interval been long.
      const last = this.pausedText.at(-1);
      if (last?.[0] === part) last[1] += text;
      else this.pausedText.push([part, text]);
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
