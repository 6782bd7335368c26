// @vitest-environment happy-dom
import { CPPServer, DemoProvider } from '@promethea/cpp-server';
import { renderHook, waitFor, act } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { useCPP } from '../src/index.js';

const servers: CPPServer[] = [];

async function startServer(port = 0): Promise<CPPServer> {
  const server = new CPPServer({ port, host: '127.0.0.1', model: new DemoProvider({ delayMs: 5, words: 12 }) });
  await server.ready;
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('useCPP', () => {
  it('connects, and keeps the active thread graph in React state while an answer streams', async () => {
    const server = await startServer();
    const { result, unmount } = renderHook(() => useCPP({ endpoint: `ws://127.0.0.1:${server.port}`, did: 'did:key:z6MkTest' }));
    await waitFor(() => expect(result.current.connection).toBe('live'));
    const client = result.current.client!;

    await act(() => client.openThread('thread_hooks1'));
    expect(result.current.threadId).toBe('thread_hooks1');
    expect(result.current.graph?.version).toBe(0);

    const seen: string[] = [];
    const answer = await act(() => client.prompt({ userPrompt: 'hello', onStream: () => seen.push(result.current.graph!.activeHeadMessageId!) }));
    const graph = result.current.graph!;
    expect(graph.activeHeadMessageId).toBe(answer.assistantNodeId);
    expect(graph.nodes[answer.assistantNodeId]).toMatchObject({ status: 'completed', content: answer.content });
    unmount();
  });
});
