import { emptyGraph, type ThreadGraph } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { SyncFrameCache } from '../../src/engine/sync-frame-cache.js';

const record = { threadId: 'thread_t', ownerDid: 'anonymous', title: 'A thread', createdAt: 1, updatedAt: 1 };

function graphWith(content: string): ThreadGraph {
  const graph = emptyGraph('thread_t');
  graph.nodes.msg_u = {
    id: 'msg_u',
    parentId: null,
    childrenIds: [],
    role: 'user',
    content,
    status: 'completed',
    createdAt: 1,
  };
  Object.assign(graph, { rootNodeId: 'msg_u', activeHeadMessageId: 'msg_u', version: 1 });
  return graph;
}

describe('the cached CPP_SYNC_GRAPH of a thread', () => {
  it('is kept for a large thread until the thread changes, and built again after', () => {
    const graph = graphWith('x'.repeat(20_000));
    const cache = new SyncFrameCache(graph, record);
    const frame = cache.get();
    expect(JSON.parse(frame).payload.nodes.msg_u.content).toHaveLength(20_000);
    expect(cache['frame']).toBe(frame);
    expect(cache.get()).toBe(frame);

    graph.version = 2;
    expect(JSON.parse(cache.get()).payload.version).toBe(2);
  });

  it('is not kept for a small thread, and is the same frame built again', () => {
    const cache = new SyncFrameCache(graphWith('Hello'), record);
    const frame = cache.get();
    expect(cache['frame']).toBe('');
    expect(JSON.parse(cache.get()).payload).toEqual(JSON.parse(frame).payload);
  });
});
