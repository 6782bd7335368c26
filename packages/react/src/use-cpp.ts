import { CPPClient, type CPPClientOptions } from '@promethea/cpp-client';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { CPPState } from './cpp-state.js';
import { useCPPState } from './use-cpp-state.js';

export interface UseCPPOptions extends Omit<CPPClientOptions, 'reconnect'> {
  /**
   * Keep trying (default true): the client reconnects a session it lost, re-opening its threads and resuming its
   * requests, and the hook retries a first connection that failed. With false, the first loss is final.
   */
  reconnect?: boolean;
}

/** `live` while open; `reconnecting` while a lost session or a failed first connection is being retried. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface CPP extends CPPState {
  /** `null` until the first effect has run (a client opens a socket, so it is not made during render). */
  client: CPPClient | null;
  connection: ConnectionState;
}

const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 10_000;

/**
 * A CPP client owned by the component: connected on mount, closed on unmount or when an option changes. A page
 * served by cpp-server may load while that server restarts, so a first connection that fails is retried here (the
 * client itself retries only sessions it had): the replacement is a new client, with no thread open yet, so
 * open yours again when `client` changes. Options are compared by identity: keep `identity` in a `useMemo`.
 */
export function useCPP(options: UseCPPOptions): CPP {
  const { endpoint, identity, did, patches, WebSocket, maxQueuedFrames, tools, reconnect = true } = options;
  const [client, setClient] = useState<CPPClient | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [retrying, setRetrying] = useState(false);
  const failedStarts = useRef(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the retry's trigger: a new value makes a new client.
  useEffect(() => {
    const created = new CPPClient({ endpoint, identity, did, patches, WebSocket, maxQueuedFrames, tools, reconnect });
    let opened = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const onStatus = (status: CPPClient['status']) => {
      if (status === 'open') {
        opened = true;
        failedStarts.current = 0;
        setRetrying(false);
      } else if (status === 'closed' && !opened && reconnect) {
        failedStarts.current += 1;
        setRetrying(true);
        retry = setTimeout(() => setAttempt((value) => value + 1), retryDelay(failedStarts.current));
      }
    };
    created.on('status', onStatus);
    setClient(created);
    return () => {
      clearTimeout(retry);
      created.off('status', onStatus);
      void created.close();
    };
  }, [endpoint, identity, did, patches, WebSocket, maxQueuedFrames, tools, reconnect, attempt]);

  const state = useCPPState(client);
  return useMemo(
    () => ({ ...state, client, connection: connectionState(state.status, retrying) }),
    [state, client, retrying],
  );
}

function retryDelay(failures: number): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1));
}

function connectionState(status: CPPClient['status'], retrying: boolean): ConnectionState {
  if (status === 'open') return 'live';
  if (status === 'reconnecting' || retrying) return 'reconnecting';
  return status;
}
