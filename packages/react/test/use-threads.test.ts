// @vitest-environment happy-dom
import { act, renderHook, waitFor } from './support/testing-library.js';
import { describe, expect, it } from 'vitest';
import { useCPP, useThreads } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

describe('useThreads', () => {
  it("lists the identity's threads once connected and again after each structural change", async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkThreadsTest' });
      return { cpp, threads: useThreads(cpp.client) };
    });
    await waitFor(() => expect(result.current.threads.threads).toEqual([]));
    const client = result.current.cpp.client!;

    await act(() => client.openThread('thread_listed'));
    await waitFor(() =>
      expect(result.current.threads.threads).toMatchObject([{ threadId: 'thread_listed', title: '' }]),
    );

    await act(() => client.prompt({ userPrompt: '  first   question ' }));
    await waitFor(() =>
      expect(result.current.threads.threads).toMatchObject([
        { threadId: 'thread_listed', title: 'first question', nodeCount: 2 },
      ]),
    );
    expect(result.current.threads.error).toBeUndefined();
  });

  it('loads older threads page by page, and keeps what it loaded current with the updates', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkThreadPages' });
      return { cpp, threads: useThreads(cpp.client, { pageSize: 2 }) };
    });
    await waitFor(() => expect(result.current.threads.threads).toEqual([]));
    const client = result.current.cpp.client!;
    for (const threadId of ['thread_a', 'thread_b', 'thread_c']) await act(() => client.openThread(threadId));
    const ids = () => result.current.threads.threads?.map((thread) => thread.threadId);
    await waitFor(() => expect(ids()).toHaveLength(3));

    act(() => result.current.threads.refresh());
    await waitFor(() => expect(result.current.threads.loading).toBe(false));
    expect(ids()).toHaveLength(2);
    expect(result.current.threads.hasMore).toBe(true);
    act(() => result.current.threads.loadMore());
    await waitFor(() => expect(result.current.threads.hasMore).toBe(false));
    const all = ids()!;
    expect([...all].sort()).toEqual(['thread_a', 'thread_b', 'thread_c']);

    const oldest = all.at(-1)!;
    await act(() => client.openThread(oldest));
    await act(() => client.prompt({ userPrompt: 'Back on top' }));
    await waitFor(() => expect(ids()?.[0]).toBe(oldest));
    await act(() => client.stop().catch(() => undefined));
    await act(() => client.deleteThread(all[0]!));
    await waitFor(() => expect(ids()).not.toContain(all[0]));
  });

  it('reports a failed listing', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkThreadsTest', reconnect: false });
      return { cpp, threads: useThreads(cpp.client) };
    });
    await waitFor(() => expect(result.current.threads.threads).toBeDefined());
    await act(() => server.close());
    act(() => result.current.threads.refresh());
    await waitFor(() => expect(result.current.threads.error).toBeInstanceOf(Error));
  });
});
