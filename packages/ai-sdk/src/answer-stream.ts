import type { FinishReason, UIMessageChunk } from 'ai';

/** The one text part of an answer; CPP nodes carry their text as one string. */
const TEXT_PART = 'text';

/**
 * One assistant answer as the AI SDK's UI message stream: `start` (naming the message by its CPP node id), the
 * text part's `text-start`, `text-delta`s and `text-end`, then `finish` — or an `error` chunk. It opens the message
 * when the first text (or the end) comes, because only then is the answer's node known.
 */
export class AnswerStream {
  readonly readable: ReadableStream<UIMessageChunk>;
  private controller!: ReadableStreamDefaultController<UIMessageChunk>;
  private started = false;
  private ended = false;

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
    this.controller.enqueue({ type: 'text-start', id: TEXT_PART });
  }

  text(delta: string): void {
    if (!this.ended && this.started && delta !== '') this.controller.enqueue({ type: 'text-delta', id: TEXT_PART, delta });
  }

  /** The answer ended: completed, or cut by a pivot or a stop (whose text the page has all of). */
  finish(finishReason: FinishReason): void {
    if (this.ended) return;
    if (this.started) this.controller.enqueue({ type: 'text-end', id: TEXT_PART });
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
}
