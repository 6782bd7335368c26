import { CPPClient, type CPPClientOptions } from '@promethea/cpp-client';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { CPPState } from './cpp-state.js';
import { useCPPState } from './use-cpp-state.js';

export interface UseCPPOptions extends CPPClientOptions {
  /** Open a new connection after the server closes this one. Default true. */
  reconnect?: boolean;
}

/** `live` once open; `reconnecting` after a connection was lost (or never opened) and another is on its way. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface CPP extends CPPState {
  /** `null` until the first effect has run (a client opens a socket, so it is not made during render). */
  client: CPPClient | null;
  connection: ConnectionState;
}

const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 10_000;

/**
 * A CPP client owned by the component: connected on mount, closed on unmount or when the endpoint or DID
 * changes, and replaced by a new one (after a growing pause) whenever its connection closes. A new client has no
 * thread open: open yours again when `client` changes.
 */
export function useCPP(options: UseCPPOptions): CPP {
  const { endpoint, did, patches, WebSocket, reconnect = true } = options;
  const [client, setClient] = useState<CPPClient | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [lostConnections, setLostConnections] = useState(0);
  const lost = useRef(0);

  useEffect(() => {
    // The hook replaces a lost client itself (see above), so the client's own reconnecting stays off.
    const created = new CPPClient({ endpoint, did, patches, WebSocket, reconnect: false });
    let retry: ReturnType<typeof setTimeout> | undefined;
    const onStatus = (status: CPPClient['status']) => {
      if (status === 'open') lost.current = 0;
      if (status === 'closed') {
        lost.current += 1;
        if (reconnect) retry = setTimeout(() => setAttempt((value) => value + 1), retryDelay(lost.current));
      }
      setLostConnections(lost.current);
    };
    created.on('status', onStatus);
    setClient(created);
    return () => {
      clearTimeout(retry);
      created.off('status', onStatus);
      void created.close();
    };
  }, [endpoint, did, patches, WebSocket, reconnect, attempt]);

  const state = useCPPState(client);
  return useMemo(
    () => ({ ...state, client, connection: connectionState(state.status, lostConnections, reconnect) }),
    [state, client, lostConnections, reconnect],
  );
}

function retryDelay(consecutiveLosses: number): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** (consecutiveLosses - 1));
}

function connectionState(status: CPPClient['status'], lostConnections: number, reconnect: boolean): ConnectionState {
  if (status === 'open') return 'live';
  if (lostConnections === 0) return 'connecting';
  return reconnect ? 'reconnecting' : 'closed';
}
