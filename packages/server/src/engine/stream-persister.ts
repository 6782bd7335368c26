import { setImmediate as nextTurn } from 'node:timers/promises';
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
 * The most answers one store save holds: a batch of more is saved in slices of this many, the event loop turning
 * between them. SQLite holds the loop for all of a transaction, and one for the bench's 520 streams held it ~5 ms
 * every 200 ms, most of the server's event-loop delay p99 above a bare ws server's; a transaction's begin and commit
 * cost ~5 µs and a row ~9 µs, so a slice holds it ~0.6 ms and the extra commits add under 1 % to the batch.
 */
export const SAVE_SLICE = 64;

/**
 * Saves the text of every answer streaming on this server in one batch per interval: one timer for all of them,
 * however many there are, and one store save (one transaction) per `SAVE_SLICE` answers, each writing only what
 * its answer streamed since its last save. A crash then loses at most what streamed since the last batch written;
 * the commit that ends an answer writes its whole text anyway. The persister keeps each answer's unsaved text
 * itself, from the chunks it is given: taking it from the answer's whole text would copy all of that text at every
 * batch.
 *
 * One batch is written at a time: the next waits for it, so saves reach the store in order, and a failed slice's
 * text, with the slices after it, is written again by the next batch, from where the store's text ends. Each slice
 * is taken when it is written, so an answer that ended while the slices before it were written (or ended and was
 * continued: a new stream of the node) is not written by it.
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

  /** Writes the batch now, its first slice at once, unless one is being written (then the next follows it). */
  flush(): void {
    this.cancelTimer();
    if (this.writing || this.due.size === 0) return;
    const written = [...this.due].filter((tracked) => tracked.unsaved.length > 0);
    this.due.clear();
    if (written.length === 0) return;
    this.writing = true;
    void this.write(written).finally(() => {
      this.writing = false;
      if (this.due.size > 0) this.arm();
    });
  }

  private async write(written: readonly Tracked[]): Promise<void> {
    for (let start = 0; start < written.length; start += SAVE_SLICE) {
      if (start > 0) {
        await nextTurn();
        // After stop the server commits every answer itself, and may close the store.
        if (this.stopped) return;
      }
      const slice = written.slice(start, start + SAVE_SLICE).filter((tracked) => this.isCurrent(tracked));
      const batch = slice.map(
        ({ threadId, nodeId, part, saved, unsaved }): StreamedText => ({
          threadId,
          nodeId,
          offset: saved,
          text: unsaved,
          ...(part === 'reasoning' ? { part } : {}),
        }),
      );
      if (batch.length === 0) continue;
      try {
        await this.store.saveStreamedText(batch);
      } catch (error) {
        this.onError(error, batch);
        for (const tracked of written.slice(start)) if (this.isCurrent(tracked)) this.due.add(tracked);
        return;
      }
      for (const [index, { text }] of batch.entries()) this.saved(slice[index]!, text.length);
    }
  }

  /** Whether `tracked` is still the part of an answer streaming here: not forgotten, nor replaced by a new stream. */
  private isCurrent(tracked: Tracked): boolean {
    return this.tracked.get(tracked.nodeId)?.get(tracked.part) === tracked;
  }

  /** No batch is written any more (a slice being written ends as it will); the server's shutdown uses it. */
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
