import { describe, expect, it } from 'vitest';
import { applyChange, findInvariantViolations, planFinish, planRegenerate } from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { conversation } from '../support/graphs.js';

const answer = { assistantNodeId: 'msg_r', createdAt: 2000, model: 'demo' };

describe('planRegenerate', () => {
  it('adds a streaming answer after the earlier ones of the user node and moves the head to it', () => {
    const graph = conversation();
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'Partial' }));
    const before = structuredClone(graph);
    const change = planRegenerate(graph, { ...answer, userNodeId: 'msg_u2' });

    expect(graph).toEqual(before);
    expect(change).toMatchObject({ baseVersion: 4, version: 5, activeHeadMessageId: 'msg_r' });
    expect(change.nodes).toEqual([
      { ...before.nodes.msg_u2, childrenIds: ['msg_a2', 'msg_r'] },
      {
        id: 'msg_r',
        parentId: 'msg_u2',
        childrenIds: [],
        role: 'assistant',
        content: '',
        status: 'streaming',
        createdAt: 2000,
        model: 'demo',
      },
    ]);
    applyChange(graph, change);
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(graph.nodes.msg_a2).toEqual(before.nodes.msg_a2);
  });

  it('interrupts the halted answer at its cut in the same change', () => {
    const graph = conversation();
    const change = planRegenerate(graph, {
      ...answer,
      userNodeId: 'msg_u2',
      halted: [{ nodeId: 'msg_a2', content: 'Part' }],
    });
    applyChange(graph, change);
    expect(graph.nodes.msg_a2).toMatchObject({ status: 'interrupted', content: 'Part' });
    expect(graph.nodes.msg_u2?.childrenIds).toEqual(['msg_a2', 'msg_r']);
    expect(findInvariantViolations(graph)).toEqual([]);
  });

  it('answers the root user node again', () => {
    const change = planRegenerate(conversation(), { ...answer, userNodeId: 'msg_u1' });
    expect(change.nodes[0]).toMatchObject({ id: 'msg_u1', childrenIds: ['msg_a1', 'msg_r'] });
  });

  it('refuses an assistant node with INVALID_NODE, an unknown node with NOT_FOUND, a used id with CONFLICT', () => {
    expectCPPError(() => planRegenerate(conversation(), { ...answer, userNodeId: 'msg_a1' }), 'INVALID_NODE');
    expectCPPError(() => planRegenerate(conversation(), { ...answer, userNodeId: 'msg_elsewhere' }), 'NOT_FOUND');
    expectCPPError(
      () => planRegenerate(conversation(), { ...answer, assistantNodeId: 'msg_a1', userNodeId: 'msg_u2' }),
      'CONFLICT',
    );
  });
});
