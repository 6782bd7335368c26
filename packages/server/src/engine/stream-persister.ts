import type { ConversationStore, StreamedText } from '../store/conversation-store.js';

/** An answer streaming on this server, as the persister reads it when its batch is written. */
export interface StreamingSource {
  readonly threadId: string;
  readonly nodeId: string;
  /** The text sent to clients so far. */
  readonly text: string;
}

interface Tracked {
  source: StreamingSource;
  /** How much of its text the store holds. */
  saved: number;
}

/**
 * Saves the text of every answer streaming on this server in one batch per interval: one timer and one store
 * transaction for all of them, however many there are, each writing only what its answer streamed since its last
 * save. A crash then loses at most what streamed since the last batch written; the commit that ends an answer
 * writes its whole text anyway.
 *
 * One batch is written at a time: the next waits for it, so saves reach the store in order, and a failed batch's
 * text is written again by the next, from where the store's text ends.
 */
export class StreamPersister {
  private readonly tracked = new Map<string, Tracked>();
  private readonly due = new Set<Tracked>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing = false;
  private stopped = false;

  constructor(
    private readonly store: ConversationStore,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown, batch: readonly StreamedText[]) => void,
  ) {}

  /** The answer has new text: the next batch writes it. */
  touch(source: StreamingSource): void {
    let tracked = this.tracked.get(source.nodeId);
    if (!tracked) {
      tracked = { source, saved: 0 };
      this.tracked.set(source.nodeId, tracked);
    }
    this.due.add(tracked);
    this.arm();
  }

  /** The answer ended (its commit writes its text) or was given up: no batch writes it any more. */
  forget(nodeId: string): void {
    const tracked = this.tracked.get(nodeId);
    if (!tracked) return;
    this.tracked.delete(nodeId);
    this.due.delete(tracked);
  }

  /** Writes the batch now, unless one is being written (then the next follows it). */
  flush(): void {
    this.cancelTimer();
    if (this.writing || this.due.size === 0) return;
    const written = [...this.due].filter(({ source, saved }) => source.text.length > saved);
    this.due.clear();
    if (written.length === 0) return;
    const batch = written.map(({ source, saved }) => ({ threadId: source.threadId, nodeId: source.nodeId, offset: saved, text: source.text.slice(saved) }));
    this.writing = true;
    this.store.saveStreamedText(batch).then(
      () => batch.forEach((entry, index) => (written[index]!.saved = entry.offset + entry.text.length)),
      (error: unknown) => {
        this.onError(error, batch);
        for (const tracked of written) if (this.tracked.get(tracked.source.nodeId) === tracked) this.due.add(tracked);
      },
    ).finally(() => {
      this.writing = false;
      if (this.due.size > 0) this.arm();
    });
  }

  /** No batch is written any more (a batch being written ends as it will); the server's shutdown uses it. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  private arm(): void {
    if (!this.stopped) this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
