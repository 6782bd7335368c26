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
