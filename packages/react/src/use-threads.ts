import type { CPPClient, GraphEvent } from '@promethea/cpp-client';
import type { ThreadSummary } from '@promethea/cpp-protocol';
import { useCallback, useEffect, useState } from 'react';

export interface ThreadsState {
  /** The identity's threads, most recently active first; `undefined` until the first list arrives. */
  threads: ThreadSummary[] | undefined;
  /** The last failure to list them, cleared by the next list. */
  error: Error | undefined;
  refresh(): void;
}

/**
 * The thread list, kept current: asked for whenever a connection opens, whenever an open thread changes
 * structurally (a new title, a new last activity) and whenever a thread is deleted, and taken from any CPP_THREADS
 * the client receives.
 */
export function useThreads(client: CPPClient | null): ThreadsState {
  const [threads, setThreads] = useState<ThreadSummary[]>();
  const [error, setError] = useState<Error>();

  const refresh = useCallback(() => {
    client?.listThreads().then(
      (list) => {
        setThreads(list);
        setError(undefined);
      },
      (failure: unknown) => setError(failure instanceof Error ? failure : new Error(String(failure))),
    );
  }, [client]);

  useEffect(() => {
    if (!client) return;
    const seenVersions = new Map<string, number>();
    const onStatus = (status: CPPClient['status']) => {
      if (status === 'open') refresh();
    };
    // Streamed text changes no version; only structural changes can change what the list shows.
    const onGraph = ({ threadId, graph }: GraphEvent) => {
      if (seenVersions.get(threadId) === graph.version) return;
      seenVersions.set(threadId, graph.version);
      refresh();
    };
    client.on('status', onStatus);
    client.on('graph', onGraph);
    client.on('threads', setThreads);
    client.on('threadDeleted', refresh);
    if (client.status === 'open') refresh();
    return () => {
      client.off('status', onStatus);
      client.off('graph', onGraph);
      client.off('threads', setThreads);
      client.off('threadDeleted', refresh);
    };
  }, [client, refresh]);

  return { threads, error, refresh };
}
