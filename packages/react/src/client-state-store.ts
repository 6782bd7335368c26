import type { CPPClient } from '@promethea/cpp-client';
import type { ThreadGraph } from '@promethea/cpp-protocol';
import type { CPPState } from './cpp-state.js';
import { snapshotGraph } from './graph-snapshot.js';

/** Every client event after which the snapshot may differ. */
const CHANGE_EVENTS = ['status', 'graph', 'chunk', 'halted', 'completed'] as const;

/**
 * Adapts a client to `useSyncExternalStore`: a snapshot that stays the same object until the client reports a
 * change. It listens from construction on, not only while React is subscribed, so that a change between a render
 * and the subscription is not missed.
 */
export class ClientStateStore {
  private readonly listeners = new Set<() => void>();
  private snapshot: CPPState;
  private stale = false;

  constructor(private readonly client: CPPClient) {
    this.snapshot = this.read();
    for (const event of CHANGE_EVENTS) client.on(event, this.invalidate);
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): CPPState => {
    if (this.stale) {
      this.snapshot = this.read(this.snapshot.graph);
      this.stale = false;
    }
    return this.snapshot;
  };

  private readonly invalidate = (): void => {
    this.stale = true;
    for (const listener of this.listeners) listener();
  };

  private read(previous?: ThreadGraph): CPPState {
    const threadId = this.client.activeThreadId;
    const live = threadId === undefined ? undefined : this.client.graph(threadId);
    return {
      status: this.client.status,
      threadId,
      graph: live && snapshotGraph(live, previous),
    };
  }
}

const stores = new WeakMap<CPPClient, ClientStateStore>();

/** One store per client, however many components read it. */
export function clientStateStore(client: CPPClient): ClientStateStore {
  let store = stores.get(client);
  if (!store) {
    store = new ClientStateStore(client);
    stores.set(client, store);
  }
  return store;
}
