import { describe, expect, it } from 'vitest';
import { applyChange, pathToRoot, planPrompt } from '@promethea/cpp-protocol';
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
