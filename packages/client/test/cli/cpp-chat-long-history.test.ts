import { newMessageId, newThreadId } from '@promethea/cpp-protocol';
import { DemoProvider, MemoryStore, type StoredThread } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { ChatProcess } from '../support/chat-process.js';

const DID = 'did:example:long-history';
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Threads of one question each, a minute apart, the first the newest. */
function history(count: number): StoredThread[] {
  return Array.from({ length: count }, (_, index) => {
    const at = 1_700_000_000_000 - index * 60_000;
    const [threadId, nodeId] = [newThreadId(), newMessageId()];
    const node = {
      id: nodeId,
      parentId: null,
      childrenIds: [],
      role: 'user' as const,
      content: `Question ${index}`,
      status: 'completed' as const,
      createdAt: at,
    };
    const graph = { threadId, rootNodeId: nodeId, activeHeadMessageId: nodeId, version: 0, nodes: { [nodeId]: node } };
    return { threadId, ownerDid: DID, title: `Thread ${index}`, createdAt: at, updatedAt: at, graph };
  });
}

describe('cpp-chat with a long history', () => {
  it('lists the 200 most recent threads and says so, and deletes an older one named by its whole id', async () => {
    const store = new MemoryStore();
    const threads = history(205);
    await store.importThreads(threads);
    const server = await startServer({ store, model: new DemoProvider({ delayMs: 0, words: 5 }) });
    cleanups.push(() => server.close());
    const chat = new ChatProcess([server.url, '--did', DID, '--thread', threads[0]!.threadId]);
    cleanups.push(() => chat.kill());
    await chat.stdout.until('(1 message);');

    chat.type('/threads');
    const listed = await chat.stdout.until('/search finds any thread, /open takes a whole id)');
    expect(listed).toContain('(the 200 most recent;');
    expect(listed).toContain('"Thread 199"');
    expect(listed).not.toContain('"Thread 200"');

    const oldest = threads.at(-1)!.threadId;
    chat.type(`/delete-thread ${oldest}`);
    await chat.stdout.until(`deleted thread ${oldest}`);
    expect(await store.threadSummary(oldest)).toBeUndefined();
    chat.type('/quit');
    expect(await chat.exited).toBe(0);
  });
});
