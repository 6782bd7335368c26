import type { FinishReason, UIMessageChunk } from 'ai';

/** The chunks of a tool call's life. */
export type ToolChunk = Extract<UIMessageChunk, { type: `tool-${string}` }>;

/** The two texts of a CPP answer: its reasoning (PROTOCOL.md §11.5) and its content. */
type Part = 'reasoning' | 'text';

/**
 * One assistant answer as the AI SDK's UI message stream: `start` (naming the message by its CPP node id), then its
 * parts in the order they stream — a reasoning part (`reasoning-start`, `-delta`s, `-end`) and a text part
 * (`text-start`, `-delta`s, `-end`), a new part each time the model turns from one to the other — then `finish`,
 * or an `error` chunk. It opens the message when the first text (or the end) comes, because only then is the
 * answer's node known.
 */
export class AnswerStream {
  readonly readable: ReadableStream<UIMessageChunk>;
  private controller!: ReadableStreamDefaultController<UIMessageChunk>;
  private started = false;
  private ended = false;
  private open: { part: Part; id: string } | undefined;
  private parts = 0;

  constructor() {
    this.readable = new ReadableStream<UIMessageChunk>({
      start: (controller) => void (this.controller = controller),
      cancel: () => void (this.ended = true),
    });
  }

  /** Opens the message (once) as the node `messageId`. */
  start(messageId: string): void {
    if (this.started || this.ended) return;
    this.started = true;
    this.controller.enqueue({ type: 'start', messageId });
  }

  /** Whether the stream has started and not ended: what is written now reaches the page. */
  get writable(): boolean {
    return this.started && !this.ended;
  }

  /** Whether the stream has ended: nothing more reaches the page. */
  get closed(): boolean {
    return this.ended;
  }

  /** A new model call of the answer begins (PROTOCOL.md §26.3). */
  step(): void {
    if (!this.writable) return;
    this.endPart();
    this.controller.enqueue({ type: 'start-step' });
  }

  /** A tool call's chunk; it ends the open text, so that text after the call is a part after it. */
  tool(chunk: ToolChunk): void {
    if (!this.writable) return;
    this.endPart();
    this.controller.enqueue(chunk);
  }

  text(delta: string): void {
    const id = this.partFor('text', delta);
    if (id !== undefined) this.controller.enqueue({ type: 'text-delta', id, delta });
  }

  reasoning(delta: string): void {
    const id = this.partFor('reasoning', delta);
    if (id !== undefined) this.controller.enqueue({ type: 'reasoning-delta', id, delta });
  }

  /** The answer ended: completed, or cut by a pivot or a stop (whose text the page has all of). */
  finish(finishReason: FinishReason): void {
    if (this.ended) return;
    this.endPart();
    this.controller.enqueue({ type: 'finish', finishReason });
    this.close();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.controller.enqueue({ type: 'error', errorText: error instanceof Error ? error.message : String(error) });
    this.close();
  }

  /** Ends the stream without a word more: the page stopped reading it. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.controller.close();
  }

  /** The id of the part `delta` goes in, opened if it is not the open one; none when there is nothing to write. */
  private partFor(part: Part, delta: string): string | undefined {
    if (!this.writable || delta === '') return undefined;
    if (this.open?.part !== part) {
      this.endPart();
      this.parts += 1;
      this.open = { part, id: `${part}-${this.parts}` };
      this.controller.enqueue({ type: part === 'text' ? 'text-start' : 'reasoning-start', id: this.open.id });
    }
    return this.open.id;
  }

  private endPart(): void {
    if (!this.open) return;
    this.controller.enqueue({ type: this.open.part === 'text' ? 'text-end' : 'reasoning-end', id: this.open.id });
    this.open = undefined;
  }
}
