import { type CPPClient, ThreadListMirror, type ThreadSummary } from '@promethea/cpp-client';
import { useCallback, useEffect, useRef, useState } from 'react';

export interface ThreadsState {
  /**
   * The threads loaded so far, most recently active first, kept current by the list's updates; `undefined` until
   * the first page arrives.
   */
  threads: readonly ThreadSummary[] | undefined;
  /** Whether the server has older threads than those loaded: `loadMore` asks for the next page. */
  hasMore: boolean;
  /** A page is on its way. */
  loading: boolean;
  /** The last failure to list them, cleared by the next page. */
  error: Error | undefined;
  /** Asks for the next page, unless one is on its way or there is none. */
  loadMore(): void;
  /** Starts again from the first page. */
  refresh(): void;
}

export interface ThreadsOptions {
  /** Threads per page, 1–200; default 50. */
  pageSize?: number;
}

/**
 * The thread list in pages (PROTOCOL.md §6.3): the first page whenever a connection opens, subscribed to the list
 * so that each thread created, changed or deleted arrives as a small update (§7.11); older threads page by page
 * with `loadMore`, as a view scrolls to them.
 */
export function useThreads(client: CPPClient | null, { pageSize = 50 }: ThreadsOptions = {}): ThreadsState {
  const mirror = useRef(new ThreadListMirror()).current;
  const [threads, setThreads] = useState<readonly ThreadSummary[]>();
  const [hasMore, setHasMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<Error>();
  /** The page being read; a page of an earlier round (before a refresh) is dropped. */
  const round = useRef(0);
  const pending = useRef(false);
  /**
   * A refresh empties the mirror when it asks, so that an update arriving before its first page is kept; the view
   * keeps showing the list it had until that page arrives.
   */
  const awaitingFirstPage = useRef(false);

  const show = useCallback(() => {
    if (awaitingFirstPage.current) return;
    setThreads(mirror.threads);
    setHasMore(mirror.hasMore);
  }, [mirror]);

  const readPage = useCallback(
    (cursor: string | undefined) => {
      if (!client) return;
      const first = cursor === undefined;
      const thisRound = first ? ++round.current : round.current;
      if (first) {
        mirror.reset();
        awaitingFirstPage.current = true;
      }
      pending.current = true;
      setLoading(true);
      const options = first ? { limit: pageSize, subscribe: true } : { limit: pageSize, cursor };
      client.listThreadPage(options).then(
        (page) => {
          if (thisRound !== round.current) return;
          mirror.addPage(page);
          awaitingFirstPage.current = false;
          pending.current = false;
          setLoading(false);
          setError(undefined);
          show();
        },
        (failure: unknown) => {
          if (thisRound !== round.current) return;
          pending.current = false;
          setLoading(false);
          setError(failure instanceof Error ? failure : new Error(String(failure)));
        },
      );
    },
    [client, mirror, pageSize, show],
  );

  const refresh = useCallback(() => readPage(undefined), [readPage]);
  const loadMore = useCallback(() => {
    if (!pending.current && mirror.nextCursor !== undefined) readPage(mirror.nextCursor);
  }, [mirror, readPage]);

  useEffect(() => {
    if (!client) return;
    // A subscription ends with its connection: each new one lists and subscribes again.
    const onStatus = (status: CPPClient['status']) => {
      if (status === 'open') refresh();
    };
    const onUpdated = (thread: ThreadSummary) => {
      if (mirror.update(thread)) show();
    };
    const onDeleted = (threadId: string) => {
      if (mirror.remove(threadId)) show();
    };
    client.on('status', onStatus);
    client.on('threadUpdated', onUpdated);
    client.on('threadDeleted', onDeleted);
    if (client.status === 'open') refresh();
    return () => {
      client.off('status', onStatus);
      client.off('threadUpdated', onUpdated);
      client.off('threadDeleted', onDeleted);
    };
  }, [client, mirror, refresh, show]);

  return { threads, hasMore, loading, error, loadMore, refresh };
}
