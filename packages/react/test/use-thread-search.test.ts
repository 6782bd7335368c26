// @vitest-environment happy-dom
import { act, renderHook, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useCPP, useThreadSearch, useThreads } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

describe('useThreadSearch', () => {
  it('searches for the query as it changes, and has no hits for a query without words', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result, rerender } = renderHook(({ query }) => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkSearchTest' });
      return { cpp, search: useThreadSearch(cpp.client, query) };
    }, { initialProps: { query: '' } });
    await waitFor(() => expect(result.current.cpp.client?.status).toBe('open'));
    const client = result.current.cpp.client!;
    await act(() => client.openThread('thread_searched'));
    await act(() => client.prompt({ userPrompt: 'Rivers of Europe' }));
    expect(result.current.search).toEqual({ hits: undefined, error: undefined });

    rerender({ query: 'river' });
    await waitFor(() => expect(result.current.search.hits?.[0]).toEqual({ threadId: 'thread_searched', title: 'Rivers of Europe', nodeId: null, snippet: 'Rivers of Europe' }));
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
