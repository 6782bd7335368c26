import { encodeServerFrame, type ThreadSummary } from '@promethea/cpp-protocol';

/** Where a list subscription's frames go: a connection. */
export interface ListSubscriber {
  send(text: string): void;
}

/**
 * How the list's frames reach the connections of the other servers of a cluster, and theirs this one's. Owned here;
 * `cpp-server.ts` makes one of the cluster's transport.
 */
export interface ListRelay {
  /** Sends an encoded list frame for `ownerDid` to the other servers; a server never receives its own. */
  publish(ownerDid: string, frame: string): void;
  /** Delivers what the other servers publish for `ownerDid`; resolves once every later frame will be delivered. */
  subscribe(ownerDid: string, deliver: (frame: string) => void): Promise<{ unsubscribe(): Promise<void> }>;
}

/**
 * The connections subscribed to their identity's thread list (docs/PROTOCOL.md §7.11), and the small updates they
 * get: one thread's summary when it is created or changes, its id when it is deleted, instead of a new list. In a
 * cluster the updates also go through `relay`, to and from the other servers.
 */
export class ThreadListFeed {
  /** DID → its subscribed connections. Only identities with a subscriber are kept. */
  private readonly subscribers = new Map<string, Set<ListSubscriber>>();
  /** DID → the relay's subscription for it, while this server has subscribers of that DID. */
  private readonly relayed = new Map<string, Promise<{ unsubscribe(): Promise<void> }>>();

  constructor(private readonly relay?: ListRelay) {}

  /** Whether anyone may listen: the store looks up what changed only then (in a cluster, always). */
  get listened(): boolean {
    return this.relay !== undefined || this.subscribers.size > 0;
  }

  isListening(ownerDid: string): boolean {
    return this.relay !== undefined || this.subscribers.has(ownerDid);
  }

  /** Resolves once the subscriber will get every update of the DID's list, those of the other servers too. */
  async subscribe(ownerDid: string, subscriber: ListSubscriber): Promise<void> {
    const set = this.subscribers.get(ownerDid) ?? new Set();
    set.add(subscriber);
    this.subscribers.set(ownerDid, set);
    if (!this.relay) return;
    let relayed = this.relayed.get(ownerDid);
    if (!relayed) {
      relayed = this.relay.subscribe(ownerDid, (frame) => this.deliver(ownerDid, frame));
      this.relayed.set(ownerDid, relayed);
    }
    await relayed;
  }

  unsubscribe(ownerDid: string, subscriber: ListSubscriber): void {
    const set = this.subscribers.get(ownerDid);
    if (!set?.delete(subscriber) || set.size > 0) return;
    this.subscribers.delete(ownerDid);
    const relayed = this.relayed.get(ownerDid);
    this.relayed.delete(ownerDid);
    void relayed?.then((subscription) => subscription.unsubscribe()).catch(() => undefined);
  }

  updated(ownerDid: string, thread: ThreadSummary): void {
    this.broadcast(ownerDid, encodeServerFrame('CPP_THREAD_UPDATED', { thread }));
  }

  deleted(ownerDid: string, threadId: string): void {
    this.broadcast(ownerDid, encodeServerFrame('CPP_THREAD_DELETED', { threadId }));
  }

  private broadcast(ownerDid: string, frame: string): void {
    this.deliver(ownerDid, frame);
    this.relay?.publish(ownerDid, frame);
  }

  private deliver(ownerDid: string, frame: string): void {
    for (const subscriber of this.subscribers.get(ownerDid) ?? []) subscriber.send(frame);
  }
}
