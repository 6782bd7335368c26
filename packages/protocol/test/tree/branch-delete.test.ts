import { describe, expect, it } from 'vitest';
import {
  applyChange,
  findInvariantViolations,
  planAnchor,
  planBranchDelete,
  planFinish,
  planPrompt,
  firstPrompts,
} from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { conversation, exchange, handBuiltGraph } from '../support/graphs.js';

describe('planBranchDelete', () => {
  it('removes the node and its subtree, takes it out of its parent and moves the head inside it to the parent', () => {
    const graph = handBuiltGraph();
    const before = structuredClone(graph);
    const change = planBranchDelete(graph, 'msg_a');

    expect(graph).toEqual(before);
    expect(change).toMatchObject({ baseVersion: 4, version: 5, rootNodeId: 'msg_r', activeHeadMessageId: 'msg_r' });
    expect(change.nodes).toEqual([{ ...before.nodes.msg_r, childrenIds: ['msg_b'] }]);
    expect(change.removedNodeIds?.sort()).toEqual(['msg_a', 'msg_c']);
    applyChange(graph, change);
    expect(Object.keys(graph.nodes).sort()).toEqual(['msg_b', 'msg_r']);
    expect(findInvariantViolations(graph)).toEqual([]);
  });

  it('leaves a head outside the branch where it is', () => {
    const change = planBranchDelete(handBuiltGraph(), 'msg_b');
    expect(change.activeHeadMessageId).toBe('msg_c');
    expect(change.removedNodeIds).toEqual(['msg_b']);
  });

  it('refuses the only first prompt with INVALID_NODE and an unknown node with NOT_FOUND', () => {
    expectCPPError(() => planBranchDelete(handBuiltGraph(), 'msg_r'), 'INVALID_NODE');
    expectCPPError(() => planBranchDelete(handBuiltGraph(), 'msg_elsewhere'), 'NOT_FOUND');
  });

  it('deletes a version of the first prompt; the head inside goes to the newest answer of the version before it', () => {
    const graph = handBuiltGraph();
    for (const version of ['msg_r2', 'msg_r3']) {
      applyChange(graph, planPrompt(graph, { ...exchange(version, `${version}_a`), parentNodeId: null }));
      applyChange(graph, planFinish(graph, { nodeId: `${version}_a`, status: 'completed', content: 'Answer' }));
    }
    expect(firstPrompts(graph).map((node) => node.id)).toEqual(['msg_r', 'msg_r2', 'msg_r3']);
    expect(graph.rootNodeId).toBe('msg_r3');

    const change = planBranchDelete(graph, 'msg_r3');
    expect(change).toMatchObject({
      rootNodeId: 'msg_r2',
      activeHeadMessageId: 'msg_r2_a',
      removedNodeIds: ['msg_r3', 'msg_r3_a'],
    });
    expect(change.nodes).toEqual([]);
    applyChange(graph, change);
    expect(findInvariantViolations(graph)).toEqual([]);
    // The first version has no version before it: the head goes to the newest answer of the one after.
    applyChange(graph, planAnchor(graph, 'msg_c'));
    expect(planBranchDelete(graph, 'msg_r')).toMatchObject({ rootNodeId: 'msg_r2', activeHeadMessageId: 'msg_r2_a' });
  });

  it('refuses a branch holding the streaming node with THREAD_BUSY, also from above it', () => {
    expectCPPError(() => planBranchDelete(conversation(), 'msg_a2'), 'THREAD_BUSY');
    expectCPPError(() => planBranchDelete(conversation(), 'msg_a1'), 'THREAD_BUSY');
  });

  it('deletes a finished branch of a conversation; a head anchored above it stays', () => {
    const graph = conversation();
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'interrupted', content: 'Part' }));
    applyChange(graph, planAnchor(graph, 'msg_u1'));
    const change = planBranchDelete(graph, 'msg_u2');
    expect(change.activeHeadMessageId).toBe('msg_u1');
    applyChange(graph, change);
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(graph.nodes.msg_a1?.childrenIds).toEqual([]);
  });
});
