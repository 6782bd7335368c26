import { encodeServerFrame, type ThreadSummary } from '@promethea/cpp-protocol';

/** Where a list subscription's frames go: a connection. */
export interface ListSubscriber {
  send(text: string): void;
}

/**
 * The connections subscribed to their identity's thread list (docs/PROTOCOL.md §7.11), and the small updates they
 * get: one thread's summary when it is created or changes, its id when it is deleted, instead of a new list.
 */
export class ThreadListFeed {
  /** DID → its subscribed connections. Only identities with a subscriber are kept. */
  private readonly subscribers = new Map<string, Set<ListSubscriber>>();

  /** Whether anyone listens: the store looks up what changed only then. */
  get listened(): boolean {
    return this.subscribers.size > 0;
  }

  isListening(ownerDid: string): boolean {
    return this.subscribers.has(ownerDid);
  }

  subscribe(ownerDid: string, subscriber: ListSubscriber): void {
    const set = this.subscribers.get(ownerDid) ?? new Set();
    set.add(subscriber);
    this.subscribers.set(ownerDid, set);
  }

  unsubscribe(ownerDid: string, subscriber: ListSubscriber): void {
    const set = this.subscribers.get(ownerDid);
    if (!set?.delete(subscriber) || set.size > 0) return;
    this.subscribers.delete(ownerDid);
  }

  updated(ownerDid: string, thread: ThreadSummary): void {
    this.broadcast(ownerDid, () => encodeServerFrame('CPP_THREAD_UPDATED', { thread }));
  }

  deleted(ownerDid: string, threadId: string): void {
    this.broadcast(ownerDid, () => encodeServerFrame('CPP_THREAD_DELETED', { threadId }));
  }

  /** Encodes the frame once, and only when someone listens. */
  private broadcast(ownerDid: string, frame: () => string): void {
    const set = this.subscribers.get(ownerDid);
    if (!set) return;
    const text = frame();
    for (const subscriber of set) subscriber.send(text);
  }
}
