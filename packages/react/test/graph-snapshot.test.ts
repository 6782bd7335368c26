import { applyChunk } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { snapshotGraph } from '../src/graph-snapshot.js';
import { TestGraph } from './support/test-graph.js';

describe('snapshotGraph', () => {
  it('copies the live graph, so later changes to it do not reach the snapshot', () => {
    const tree = new TestGraph().prompt(1);
    const snapshot = snapshotGraph(tree.graph, undefined);
    applyChunk(tree.graph, { threadId: 'thread_test', nodeId: 'msg_a1', offset: 0, delta: 'Hel' });
    expect(snapshot.nodes.msg_a1?.content).toBe('');
    expect(snapshot).not.toBe(tree.graph);
    expect(snapshot).toEqual({
      ...tree.graph,
      nodes: { ...tree.graph.nodes, msg_a1: { ...tree.graph.nodes.msg_a1, content: '' } },
    });
  });

  it('keeps the objects of unchanged nodes and replaces the changed ones', () => {
    const tree = new TestGraph().prompt(1);
    const before = snapshotGraph(tree.graph, undefined);
    applyChunk(tree.graph, { threadId: 'thread_test', nodeId: 'msg_a1', offset: 0, delta: 'Hel' });
    const after = snapshotGraph(tree.graph, before);
    expect(after.nodes.msg_u1).toBe(before.nodes.msg_u1);
    expect(after.nodes.msg_a1).not.toBe(before.nodes.msg_a1);
    expect(after.nodes.msg_a1?.content).toBe('Hel');
  });

  it('replaces a node whose reasoning changed', () => {
    const tree = new TestGraph().prompt(1);
    const before = snapshotGraph(tree.graph, undefined);
    applyChunk(tree.graph, { threadId: 'thread_test', nodeId: 'msg_a1', offset: 0, delta: 'Hmm', part: 'reasoning' });
    const after = snapshotGraph(tree.graph, before);
    expect(after.nodes.msg_a1).not.toBe(before.nodes.msg_a1);
    expect(after.nodes.msg_a1?.reasoning).toBe('Hmm');
  });

  it('replaces a node whose children changed', () => {
    const tree = new TestGraph().prompt(1).finish(1);
    const before = snapshotGraph(tree.graph, undefined);
    tree.prompt(2);
    const after = snapshotGraph(tree.graph, before);
    expect(after.nodes.msg_u1).toBe(before.nodes.msg_u1);
    expect(after.nodes.msg_a1?.childrenIds).toEqual(['msg_u2']);
    expect(before.nodes.msg_a1?.childrenIds).toEqual([]);
  });

  it('reuses nothing from a snapshot of another thread', () => {
    const other = snapshotGraph({ ...new TestGraph().prompt(1).graph, threadId: 'thread_other' }, undefined);
    const snapshot = snapshotGraph(new TestGraph().prompt(1).graph, other);
    expect(snapshot.nodes.msg_u1).not.toBe(other.nodes.msg_u1);
  });
});
