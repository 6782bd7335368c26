import type { TextPart } from '@promethea/cpp-protocol';
import type { ConversationStore, StreamedText } from '../store/conversation-store.js';

/** One part (text or reasoning) of an answer streaming on this server, and what of it the store does not hold yet. */
interface Tracked {
  threadId: string;
  nodeId: string;
  part: TextPart;
  /** How much of the part the store holds. */
  saved: number;
  /** The text sent since: the next batch's piece of this part. */
  unsaved: string;
}

/**
 * Saves the text of every answer streaming on this server in one batch per interval: one timer and one store save
 * for all of them, however many there are, each writing only what its answer streamed since its last save. A crash
 * then loses at most what streamed since the last batch written; the commit that ends an answer writes its whole
 * text anyway. The persister keeps each answer's unsaved text itself, from the chunks it is given: taking it from
 * the answer's whole text would copy all of that text at every batch.
 *
 * One batch is written at a time: the next waits for it, so saves reach the store in order, and a failed batch's
 * text is written again by the next, from the same offsets, so that it replaces whatever part of the failed batch
 * the store did write.
 */
export class StreamPersister {
  /** By node, then part. */
  private readonly tracked = new Map<string, Map<TextPart, Tracked>>();
  private readonly due = new Set<Tracked>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing = false;
  private stopped = false;

  constructor(
    private readonly store: ConversationStore,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown, batch: readonly StreamedText[]) => void,
  ) {}

  /**
   * The answer `nodeId` sent `text` in `part` at `offset`, which follows what it sent before: the next batch writes
   * it. The first text of a part says where the store's text of it ends: a continued answer's text goes on from the
   * length it had.
   */
  append(threadId: string, nodeId: string, part: TextPart, offset: number, text: string): void {
    const parts = this.tracked.get(nodeId) ?? new Map<TextPart, Tracked>();
    this.tracked.set(nodeId, parts);
    let tracked = parts.get(part);
    if (!tracked) {
      tracked = { threadId, nodeId, part, saved: offset, unsaved: '' };
      parts.set(part, tracked);
    }
    tracked.unsaved += text;
    this.due.add(tracked);
    this.arm();
  }

  /** The answer ended (its commit writes its text) or was given up: no batch writes it any more. */
  forget(nodeId: string): void {
    const parts = this.tracked.get(nodeId);
    if (!parts) return;
    this.tracked.delete(nodeId);
    for (const tracked of parts.values()) this.due.delete(tracked);
  }

  /** Writes the batch now, unless one is being written (then the next follows it). */
  flush(): void {
    this.cancelTimer();
    if (this.writing || this.due.size === 0) return;
    const written = [...this.due].filter((tracked) => tracked.unsaved.length > 0);
    this.due.clear();
    if (written.length === 0) return;
    const batch = written.map(({ threadId, nodeId, part, saved, unsaved }): StreamedText => ({
      threadId,
      nodeId,
      offset: saved,
      text: unsaved,
      ...(part === 'reasoning' ? { part } : {}),
    }));
    this.writing = true;
    this.store
      .saveStreamedText(batch)
      .then(
        () => batch.forEach(({ text }, index) => this.saved(written[index]!, text.length)),
        (error: unknown) => {
          this.onError(error, batch);
          for (const tracked of written) if (this.tracked.get(tracked.nodeId)?.get(tracked.part) === tracked) this.due.add(tracked);
        },
      )
      .finally(() => {
        this.writing = false;
        if (this.due.size > 0) this.arm();
      });
  }

  /** No batch is written any more (a batch being written ends as it will); the server's shutdown uses it. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  /** The store holds `length` more of the answer's text: what streamed while it was written stays unsaved. */
  private saved(tracked: Tracked, length: number): void {
    tracked.saved += length;
    tracked.unsaved = tracked.unsaved.slice(length);
  }

  private arm(): void {
    if (!this.stopped) this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
