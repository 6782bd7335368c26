// @vitest-environment happy-dom
import { MemoryStore } from '@promethea/cpp-server';
import type { ThreadGraph } from '@promethea/cpp-protocol';
import { act, renderHook, waitFor } from './support/testing-library.js';
import { describe, expect, it } from 'vitest';
import { useCPP } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

const did = 'did:key:z6MkHookTests';

describe('useCPP', () => {
  it('connects, and renders every change of the active thread while the answer streams', async () => {
    const server = await startDemoServer();
    const rendered: Array<ThreadGraph | undefined> = [];
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => {
      const cpp = useCPP({ endpoint, did });
      rendered.push(cpp.graph);
      return cpp;
    });
    expect(result.current.connection).toBe('connecting');
    await waitFor(() => expect(result.current.connection).toBe('live'));
    const client = result.current.client!;

    await act(() => client.openThread('thread_hooks_stream'));
    expect(result.current).toMatchObject({
      threadId: 'thread_hooks_stream',
      status: 'open',
      graph: { version: 0, rootNodeId: null },
    });

    const answer = await act(() => client.prompt({ userPrompt: 'hello' }));
    expect(result.current.graph).toEqual(client.graph());
    expect(result.current.graph!.nodes[answer.assistantNodeId]).toMatchObject({
      status: 'completed',
      content: answer.content,
    });
    const partial = rendered
      .map((graph) => graph?.nodes[answer.assistantNodeId])
      .filter((node) => node?.status === 'streaming' && node.content !== '');
    expect(partial.length).toBeGreaterThan(0);
    expect(answer.content.startsWith(partial[0]!.content)).toBe(true);
  });

  it('closes its client on unmount', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result, unmount } = renderHook(() => useCPP({ endpoint, did }));
    await waitFor(() => expect(result.current.connection).toBe('live'));
    await waitFor(() => expect(server.connectionCount).toBe(1));
    unmount();
    await waitFor(() => expect(server.connectionCount).toBe(0));
    expect(result.current.client!.status).toBe('closed');
  });

  it('shows a lost session as reconnecting while the client gets it back, thread and all', async () => {
    const store = new MemoryStore();
    const first = await startDemoServer({ store });
    const port = first.port;
    const endpoint = endpointOf(first);
    const { result } = renderHook(() => useCPP({ endpoint, did }));
    await waitFor(() => expect(result.current.connection).toBe('live'));
    const client = result.current.client!;
    await act(() => client.openThread('thread_hooks_reconnect'));

    await act(() => first.close());
    await waitFor(() => expect(result.current.connection).toBe('reconnecting'));

    await startDemoServer({ port, store });
    await waitFor(() => expect(result.current.connection).toBe('live'), { timeout: 15_000 });
    expect(result.current.client).toBe(client);
    expect(result.current.graph?.threadId).toBe('thread_hooks_reconnect');
    await act(() => client.prompt({ userPrompt: 'after the loss' }));
    expect(result.current.graph?.rootNodeId).not.toBeNull();
  });

  it('retries a first connection that fails, with a new client', async () => {
    const gone = await startDemoServer();
    const port = gone.port;
    const endpoint = endpointOf(gone);
    await gone.close();
    const { result } = renderHook(() => useCPP({ endpoint, did }));
    await waitFor(() => expect(result.current.connection).toBe('reconnecting'));
    const failed = result.current.client;

    await startDemoServer({ port });
    await waitFor(() => expect(result.current.connection).toBe('live'), { timeout: 15_000 });
    expect(result.current.client).not.toBe(failed);
  });

  it('stays closed after a lost connection when reconnect is off', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const { result } = renderHook(() => useCPP({ endpoint, did, reconnect: false }));
    await waitFor(() => expect(result.current.connection).toBe('live'));
    await act(() => server.close());
    await waitFor(() => expect(result.current.connection).toBe('closed'));
  });
});
