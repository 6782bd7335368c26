import type { CPPClient } from '@promethea/cpp-client';
import { useSyncExternalStore } from 'react';
import { clientStateStore } from './client-state-store.js';
import type { CPPState } from './cpp-state.js';

const NO_CLIENT: CPPState = { status: 'connecting', threadId: undefined, graph: undefined };
const subscribeToNothing = () => () => undefined;
const noClientSnapshot = () => NO_CLIENT;

/** The live state of a client you own, in React state. `null` (no client yet) reads as connecting. */
export function useCPPState(client: CPPClient | null): CPPState {
  const store = client && clientStateStore(client);
  return useSyncExternalStore(store?.subscribe ?? subscribeToNothing, store?.getSnapshot ?? noClientSnapshot);
}
