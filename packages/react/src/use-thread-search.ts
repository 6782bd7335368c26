import type { CPPClient } from '@promethea/cpp-client';
import { searchTerms, type SearchHit } from '@promethea/cpp-protocol';
import { useEffect, useState } from 'react';

export interface ThreadSearch {
  /** The hits of the query, best first; `undefined` while there is no query (or no term in it) or no answer yet. */
  hits: SearchHit[] | undefined;
  /** The last search failed; cleared by the next. */
  error: Error | undefined;
}

export interface ThreadSearchOptions {
  /**
   * How long the query must stay unchanged before it is searched, in milliseconds; default 200. Each search is a
   * full-text query on the server's store, limited per identity (PROTOCOL.md §25.3): typing searches once per pause,
   * not once per keystroke.
   */
  debounceMs?: number;
}

/**
 * Searches the identity's threads for `query` (PROTOCOL.md §25.3) once it has stopped changing for `debounceMs`.
 * An answer to a query that has changed since is dropped, so the hits always belong to the query shown.
 */
export function useThreadSearch(
  client: CPPClient | null,
  query: string,
  { debounceMs = 200 }: ThreadSearchOptions = {},
): ThreadSearch {
  const [search, setSearch] = useState<ThreadSearch>({ hits: undefined, error: undefined });
  const searchable = searchTerms(query).length > 0;

  useEffect(() => {
    setSearch({ hits: undefined, error: undefined });
    if (!client || !searchable) return;
    let current = true;
    const pause = setTimeout(() => {
      client.searchThreads(query).then(
        (hits) => current && setSearch({ hits, error: undefined }),
        (failure: unknown) =>
          current &&
          setSearch({ hits: undefined, error: failure instanceof Error ? failure : new Error(String(failure)) }),
      );
    }, debounceMs);
    return () => {
      current = false;
      clearTimeout(pause);
    };
  }, [client, query, searchable, debounceMs]);

  return search;
}
