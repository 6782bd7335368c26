import type { CPPClient } from '@promethea/cpp-client';
import { searchTerms, type SearchHit } from '@promethea/cpp-protocol';
import { useEffect, useState } from 'react';

export interface ThreadSearch {
  /** The hits of the query, best first; `undefined` while there is no query (or no term in it) or no answer yet. */
  hits: SearchHit[] | undefined;
  /** The last search failed; cleared by the next. */
  error: Error | undefined;
}

/**
 * Searches the identity's threads for `query` (PROTOCOL.md §25.3) whenever it changes. An answer to a query that
 * has changed since is dropped, so the hits always belong to the query shown.
 */
export function useThreadSearch(client: CPPClient | null, query: string): ThreadSearch {
  const [search, setSearch] = useState<ThreadSearch>({ hits: undefined, error: undefined });
  const searchable = searchTerms(query).length > 0;

  useEffect(() => {
    setSearch({ hits: undefined, error: undefined });
    if (!client || !searchable) return;
    let current = true;
    client.searchThreads(query).then(
      (hits) => current && setSearch({ hits, error: undefined }),
      (failure: unknown) => current && setSearch({ hits: undefined, error: failure instanceof Error ? failure : new Error(String(failure)) }),
    );
    return () => {
      current = false;
    };
  }, [client, query, searchable]);

  return search;
}
