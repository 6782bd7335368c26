import { describe, expect, it } from 'vitest';
import {
  applyChange,
  findInvariantViolations,
  planContinue,
  planFinish,
  planPivotSplice,
} from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { conversation, exchange } from '../support/graphs.js';

/** The conversation with msg_a2 interrupted at "Partial" and the head moved back to msg_a1. */
function interrupted() {
  const graph = conversation();
  applyChange(
    graph,
    planFinish(graph, { nodeId: 'msg_a2', status: 'interrupted', content: 'Partial', reasoning: 'Think' }),
  );
  graph.activeHeadMessageId = 'msg_a1';
  return graph;
}

describe('planContinue', () => {
  it('sets the same answer streaming again with its text and reasoning kept, records the model and moves the head to it', () => {
    const graph = interrupted();
    const before = structuredClone(graph);
    const change = planContinue(graph, { nodeId: 'msg_a2', model: 'strong' });
    expect(graph).toEqual(before);
    expect(change).toMatchObject({ baseVersion: 4, version: 5, activeHeadMessageId: 'msg_a2' });
    expect(change.nodes).toEqual([{ ...before.nodes.msg_a2, status: 'streaming', model: 'strong' }]);
    applyChange(graph, change);
    expect(findInvariantViolations(graph)).toEqual([]);
  });

  it('continues a failed answer and keeps its model when none is named', () => {
    const graph = conversation();
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'failed', content: 'Part' }));
    const change = planContinue(graph, { nodeId: 'msg_a2' });
    expect(change.nodes[0]).toMatchObject({ status: 'streaming', content: 'Part' });
    expect(change.nodes[0]).not.toHaveProperty('model');
  });

  it('refuses what is not an interrupted or failed answer without children: INVALID_NODE; an unknown node: NOT_FOUND', () => {
    expectCPPError(() => planContinue(interrupted(), { nodeId: 'msg_u2' }), 'INVALID_NODE');
    expectCPPError(() => planContinue(interrupted(), { nodeId: 'msg_a1' }), 'INVALID_NODE');
    expectCPPError(() => planContinue(conversation(), { nodeId: 'msg_a2' }), 'INVALID_NODE');
    expectCPPError(() => planContinue(interrupted(), { nodeId: 'msg_elsewhere' }), 'NOT_FOUND');
    const pivoted = conversation();
    applyChange(
      pivoted,
      planPivotSplice(pivoted, { ...exchange('msg_u3', 'msg_a3'), interruptedNodeId: 'msg_a2', cutContent: 'Part' }),
    );
    expectCPPError(() => planContinue(pivoted, { nodeId: 'msg_a2' }), 'INVALID_NODE');
  });
});

describe('reasoning through the tree operations', () => {
  it('a finish and a pivot keep the reasoning at the cut; empty reasoning is no reasoning', () => {
    const graph = conversation();
    const finished = planFinish(graph, { nodeId: 'msg_a2', status: 'interrupted', content: '', reasoning: 'Let me' });
    expect(finished.nodes[0]).toMatchObject({ content: '', reasoning: 'Let me' });
    const spliced = planPivotSplice(graph, {
      ...exchange('msg_u3', 'msg_a3'),
      interruptedNodeId: 'msg_a2',
      cutContent: 'Pa',
      cutReasoning: '',
    });
    expect(spliced.nodes.find((node) => node.id === 'msg_a2')).not.toHaveProperty('reasoning');
  });
});
