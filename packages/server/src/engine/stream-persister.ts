import type { ConversationStore, StreamingContent } from '../store/conversation-store.js';

/** An answer streaming on this server, as the persister reads it when its batch is written. */
export interface StreamingSource {
  readonly threadId: string;
  readonly nodeId: string;
  /** The text sent to clients so far. */
  readonly text: string;
}

/**
 * Saves the text of every answer streaming on this server in one batch per interval: one timer and one store
 * transaction for all of them, however many there are, instead of one of each per answer. A crash then loses at
 * most one interval of any answer; the commit that ends an answer writes its whole text anyway.
 */
export class StreamPersister {
  private readonly due = new Map<string, StreamingSource>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: ConversationStore,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown, batch: readonly StreamingContent[]) => void,
  ) {}

  /** The answer has new text: the next batch writes it. */
  touch(source: StreamingSource): void {
    this.due.set(source.nodeId, source);
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  /** The answer ended (its commit writes its text) or was given up: no batch writes it any more. */
  forget(nodeId: string): void {
    this.due.delete(nodeId);
  }

  /** Writes the batch now; the server's shutdown uses it. */
  flush(): void {
    this.stop();
    if (this.due.size === 0) return;
    const batch = [...this.due.values()].map(({ threadId, nodeId, text }) => ({ threadId, nodeId, content: text }));
    this.due.clear();
    this.store.saveStreamingContents(batch).catch((error: unknown) => this.onError(error, batch));
  }

  /** Stops the timer; what is due stays due. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
