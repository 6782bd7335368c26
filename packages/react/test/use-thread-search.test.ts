// @vitest-environment happy-dom
import { act, renderHook, waitFor } from './support/testing-library.js';
import type { CPPClient } from '@promethea/cpp-client';
import type { SearchHit } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useCPP, useThreadSearch, useThreads } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

/** A client whose searches (one CPP_THREAD_SEARCH each) are answered when, and in the order, the test says. */
function searchingClient() {
  const searches: Array<{ query: string; answer(hits: SearchHit[]): void }> = [];
  const client = {
    searchThreads: (query: string) => new Promise<SearchHit[]>((answer) => searches.push({ query, answer })),
  } as unknown as CPPClient;
  return { client, searches };
}

const hitIn = (threadId: string): SearchHit => ({ threadId, title: threadId, nodeId: null, snippet: threadId });

describe('useThreadSearch', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('searches once the query has stopped changing for the delay, not on every keystroke', () => {
    vi.useFakeTimers();
    const { client, searches } = searchingClient();
    const { rerender } = renderHook(({ query }) => useThreadSearch(client, query, { debounceMs: 200 }), {
      initialProps: { query: '' },
    });
    for (const query of ['r', 'ri', 'riv', 'rive', 'river']) {
      rerender({ query });
      act(() => vi.advanceTimersByTime(150));
    }
    expect(searches).toEqual([]);
    act(() => vi.advanceTimersByTime(50));
    expect(searches.map((search) => search.query)).toEqual(['river']);
    act(() => vi.advanceTimersByTime(1000));
    expect(searches).toHaveLength(1);
  });

  it("shows the last query's hits even when an earlier query's answer arrives after them", async () => {
    vi.useFakeTimers();
    const { client, searches } = searchingClient();
    const { result, rerender } = renderHook(({ query }) => useThreadSearch(client, query), {
      initialProps: { query: 'river' },
    });
    act(() => vi.advanceTimersByTime(200));
    rerender({ query: 'lake' });
    act(() => vi.advanceTimersByTime(200));
    const [river, lake] = searches;
    expect([river?.query, lake?.query]).toEqual(['river', 'lake']);

    await act(async () => lake!.answer([hitIn('thread_lake')]));
    expect(result.current.hits).toEqual([hitIn('thread_lake')]);
    await act(async () => river!.answer([hitIn('thread_river')]));
    expect(result.current.hits).toEqual([hitIn('thread_lake')]);
  });

  it('searches for the query as it changes, and has no hits for a query without words', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result, rerender } = renderHook(
      ({ query }) => {
        const cpp = useCPP({ endpoint, did: 'did:key:z6MkSearchTest' });
        return { cpp, search: useThreadSearch(cpp.client, query) };
      },
      { initialProps: { query: '' } },
    );
    await waitFor(() => expect(result.current.cpp.client?.status).toBe('open'));
    const client = result.current.cpp.client!;
    await act(() => client.openThread('thread_searched'));
    await act(() => client.prompt({ userPrompt: 'Rivers of Europe' }));
    expect(result.current.search).toEqual({ hits: undefined, error: undefined });

    rerender({ query: 'river' });
    await waitFor(() =>
      expect(result.current.search.hits?.[0]).toEqual({
        threadId: 'thread_searched',
        title: 'Rivers of Europe',
        nodeId: null,
        snippet: 'Rivers of Europe',
      }),
    );
    rerender({ query: 'nothing-like-it' });
    await waitFor(() => expect(result.current.search.hits).toEqual([]));
    rerender({ query: ' … ' });
    expect(result.current.search.hits).toBeUndefined();
  });
});

describe('useThreads after a deletion', () => {
  it('lists the threads again when one is deleted', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkDeleteTest' });
      return { cpp, threads: useThreads(cpp.client) };
    });
    await waitFor(() => expect(result.current.threads.threads).toEqual([]));
    const client = result.current.cpp.client!;
    await act(() => client.openThread('thread_doomed'));
    await waitFor(() => expect(result.current.threads.threads).toHaveLength(1));
    await act(() => client.deleteThread('thread_doomed'));
    await waitFor(() => expect(result.current.threads.threads).toEqual([]));
  });
});
