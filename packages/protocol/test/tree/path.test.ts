import { describe, expect, it } from 'vitest';
import { applyChange, pathToRoot, pathToRootAfter, planPivotSplice, planPrompt } from '@promethea/cpp-protocol';
import { conversation, exchange, handBuiltGraph } from '../support/graphs.js';

const ids = (nodes: { id: string }[]) => nodes.map((node) => node.id);

describe('pathToRoot', () => {
  it('lists the nodes from the root down to the node, both included', () => {
    expect(ids(pathToRoot(conversation(), 'msg_a2'))).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2']);
    expect(ids(pathToRoot(conversation(), 'msg_u1'))).toEqual(['msg_u1']);
  });

  it('leaves other branches out', () => {
    const graph = conversation();
    applyChange(graph, planPrompt(graph, { ...exchange('msg_u3', 'msg_a3'), parentNodeId: 'msg_a1' }));
    expect(ids(pathToRoot(graph, 'msg_a3'))).toEqual(['msg_u1', 'msg_a1', 'msg_u3', 'msg_a3']);
  });

  it('is empty for a node that is not in the thread', () => {
    expect(pathToRoot(conversation(), 'msg_nope')).toEqual([]);
  });

  it('throws on a cycle instead of looping', () => {
    const graph = handBuiltGraph();
    graph.nodes.msg_a = { ...graph.nodes.msg_a!, parentId: 'msg_c' };
    expect(() => pathToRoot(graph, 'msg_c')).toThrow(/cycle/);
  });
});

describe('pathToRootAfter', () => {
  it('is the path the graph will have once the change is applied, the graph left as it is', () => {
    const graph = conversation();
    const change = planPrompt(graph, { ...exchange('msg_u3', 'msg_a3'), parentNodeId: 'msg_a1' });
    const before = structuredClone(graph);
    const planned = pathToRootAfter(graph, change, 'msg_a3');
    expect(graph).toEqual(before);
    applyChange(graph, change);
    expect(planned).toEqual(pathToRoot(graph, 'msg_a3'));
  });

  it("sees a changed node as the change has it: a pivot's cut", () => {
    const graph = conversation();
    graph.nodes.msg_a2 = { ...graph.nodes.msg_a2!, status: 'streaming', content: 'Partial answer' };
    const change = planPivotSplice(graph, {
      interruptedNodeId: 'msg_a2',
      userNodeId: 'msg_u3',
      userPrompt: 'Other',
      assistantNodeId: 'msg_a3',
      model: 'm',
      createdAt: 1,
      cutContent: 'Part',
    });
    const planned = pathToRootAfter(graph, change, 'msg_a3');
    expect(ids(planned)).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2', 'msg_u3', 'msg_a3']);
    expect(planned[3]).toMatchObject({ content: 'Part', status: 'interrupted' });
  });
});
