import type { ThreadSummary } from '@promethea/cpp-client';
import { describe, expect, it } from 'vitest';
import { useFakeSession } from './support/session.js';

describe('CPPClient events', () => {
  const session = useFakeSession();

  it("announces chunks, completions and thread lists, and 'off' removes a listener", async () => {
    const client = session.connect();
    const seen: string[] = [];
    const lists: ThreadSummary[][] = [];
    const onChunk = ({ delta }: { delta: string }) => seen.push(`chunk ${delta}`);
    client.on('chunk', onChunk);
    client.on('completed', ({ finalContentLength, finishReason }) =>
      seen.push(`completed ${finalContentLength} ${finishReason}`),
    );
    client.on('threads', (threads) => lists.push(threads));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'One');
    session.server.chunk(threadId, assistantNodeId, ' two');
    await client.listThreads();
    client.off('chunk', onChunk);
    session.server.chunk(threadId, assistantNodeId, ' three');
    session.server.complete(threadId, assistantNodeId);
    await result;

    expect(seen).toEqual(['chunk One', 'chunk  two', 'completed 13 stop']);
    expect(lists).toEqual([[{ threadId, title: '', createdAt: 0, updatedAt: 0, version: 1, nodeCount: 2 }]]);
  });
});
