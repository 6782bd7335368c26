import { emptyGraph, type ThreadGraph } from '@promethea/cpp-protocol';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ThreadAccess, type ThreadAccessSettings } from '../../src/auth/thread-access.js';
import type { ThreadRegistry } from '../../src/engine/thread-registry.js';
import type { ConversationStore } from '../../src/store/conversation-store.js';

const NO_LIMITS: ThreadAccessSettings['limits'] = {
  maxThreadsPerDid: 0,
  maxMembersPerThread: 0,
  maxNodesPerThread: 0,
  maxThreadBytes: 0,
  maxPromptLength: 0,
  syncsPerMinute: 0,
  searchesPerMinute: 0,
};

/** Room checks read only the settings: neither the registry nor the store is asked. */
const access = (limits: Partial<ThreadAccessSettings['limits']>) =>
  new ThreadAccess({} as ThreadRegistry, {} as ConversationStore, {
    ownerOnly: false,
    limits: { ...NO_LIMITS, ...limits },
    fileLimits: { maxBytes: 1024, maxImagePixels: 1024 },
  });

function graphOf(count: number): ThreadGraph {
  const graph = emptyGraph('thread_t');
  for (let index = 0; index < count; index += 1) {
    const id = `msg_${index}`;
    graph.nodes[id] = {
      id,
      parentId: null,
      childrenIds: [],
      role: 'user',
      content: `prompt ${index}`,
      status: 'completed',
      createdAt: 1,
    };
  }
  return graph;
}

describe('the room a thread has', () => {
  it('is not counted when no limit bounds a thread: counting walks its nodes', () => {
    const reads = vi.spyOn(Buffer, 'byteLength');
    onTestFinished(() => reads.mockRestore());
    access({}).checkPrompt(graphOf(100), 'Hello', 'msg_new');
    access({}).checkContinue(graphOf(100), 'msg_1');
    expect(reads).toHaveBeenCalledTimes(0);

    access({ maxThreadBytes: 10_000 }).checkPrompt(graphOf(100), 'Hello', 'msg_new');
    expect(reads).toHaveBeenCalledTimes(100 * 2 + 1);
  });

  it('is RATE_LIMITED past either limit, counting the nodes and text the frame would add', () => {
    const graph = graphOf(3);
    expect(() => access({ maxNodesPerThread: 5 }).checkPrompt(graph, 'Hello', 'msg_new')).not.toThrow();
    expect(() => access({ maxNodesPerThread: 4 }).checkPrompt(graph, 'Hello', 'msg_new')).toThrow(
      /limit is 4 messages/,
    );
    const bytes = 3 * 'prompt 0'.length + 'Hello'.length;
    expect(() => access({ maxThreadBytes: bytes }).checkPrompt(graph, 'Hello', 'msg_new')).not.toThrow();
    expect(() => access({ maxThreadBytes: bytes - 1 }).checkPrompt(graph, 'Hello', 'msg_new')).toThrow(
      /limit is \d+ bytes/,
    );
  });
});
