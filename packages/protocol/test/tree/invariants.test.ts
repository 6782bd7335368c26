import { describe, expect, it } from 'vitest';
import { emptyGraph, findInvariantViolations, type ThreadGraph } from '@promethea/cpp-protocol';
import { THREAD, conversation, handBuiltGraph, node } from '../support/graphs.js';

/** The hand-built graph broken by `breakIt`: each case below breaks exactly one rule. */
function broken(breakIt: (graph: ThreadGraph) => void): ThreadGraph {
  const graph = handBuiltGraph();
  breakIt(graph);
  return graph;
}

describe('findInvariantViolations', () => {
  it('finds nothing wrong with sound graphs', () => {
    expect(findInvariantViolations(emptyGraph(THREAD))).toEqual([]);
    expect(findInvariantViolations(handBuiltGraph())).toEqual([]);
    expect(findInvariantViolations(conversation())).toEqual([]);
  });

  it('detects a root id or head in an empty thread', () => {
    expect(findInvariantViolations({ ...emptyGraph(THREAD), rootNodeId: 'msg_r' })).toEqual([
      'empty thread has a root id',
    ]);
    expect(findInvariantViolations({ ...emptyGraph(THREAD), activeHeadMessageId: 'msg_r' })).toEqual([
      'empty thread has a head',
    ]);
  });

  const cases: Array<[string, (graph: ThreadGraph) => void, string | RegExp]> = [
    [
      'no root at all',
      (graph) => {
        graph.nodes.msg_r = { ...graph.nodes.msg_r!, parentId: 'msg_c' };
        graph.nodes.msg_c = { ...graph.nodes.msg_c!, childrenIds: ['msg_r'] };
      },
      'no node without a parent: the thread has no first prompt',
    ],
    [
      'a root id naming another node',
      (graph) => (graph.rootNodeId = 'msg_a'),
      'rootNodeId msg_a is not a first prompt',
    ],
    ['a null root id', (graph) => (graph.rootNodeId = null), 'rootNodeId null is not a first prompt'],
    [
      "a root id naming a first prompt that is not the head's",
      (graph) => {
        graph.nodes.msg_x = node('msg_x', null);
        graph.rootNodeId = 'msg_x';
      },
      "rootNodeId msg_x is not the first prompt of the head's branch",
    ],
    [
      'a head that does not resolve',
      (graph) => (graph.activeHeadMessageId = 'msg_gone'),
      'head msg_gone does not resolve',
    ],
    ['a null head', (graph) => (graph.activeHeadMessageId = null), 'head null does not resolve'],
    [
      'a node stored under another id',
      (graph) => (graph.nodes.msg_b = { ...graph.nodes.msg_b!, id: 'msg_z' }),
      'node stored under msg_b has id msg_z',
    ],
    [
      'a streaming user node',
      (graph) => (graph.nodes.msg_c = { ...graph.nodes.msg_c!, status: 'streaming' }),
      'user node msg_c is streaming',
    ],
    [
      'a parent that does not resolve',
      (graph) => {
        graph.nodes.msg_x = node('msg_x', 'msg_gone');
      },
      'parent msg_gone of msg_x does not resolve',
    ],
    [
      'a parent that does not list its child',
      (graph) => (graph.nodes.msg_r = { ...graph.nodes.msg_r!, childrenIds: ['msg_a'] }),
      'parent msg_r does not list msg_b exactly once',
    ],
    [
      'a parent that lists its child twice',
      (graph) => (graph.nodes.msg_a = { ...graph.nodes.msg_a!, childrenIds: ['msg_c', 'msg_c'] }),
      'parent msg_a does not list msg_c exactly once',
    ],
    [
      'a child that does not resolve',
      (graph) => (graph.nodes.msg_b = { ...graph.nodes.msg_b!, childrenIds: ['msg_gone'] }),
      'child msg_gone of msg_b does not resolve',
    ],
    [
      'a child naming another parent',
      (graph) => (graph.nodes.msg_b = { ...graph.nodes.msg_b!, childrenIds: ['msg_c'] }),
      'child msg_c of msg_b names parent msg_a',
    ],
    [
      'a cycle detached from the root',
      (graph) => {
        graph.nodes.msg_x = node('msg_x', 'msg_y', { childrenIds: ['msg_y'] });
        graph.nodes.msg_y = node('msg_y', 'msg_x', { childrenIds: ['msg_x'] });
      },
      '2 nodes are not reachable from a first prompt (cycle or orphan)',
    ],
  ];

  it('finds nothing wrong with several first prompts, the root being the one the head is under', () => {
    const graph = broken((each) => {
      each.nodes.msg_x = node('msg_x', null, { childrenIds: ['msg_y'] });
      each.nodes.msg_y = node('msg_y', 'msg_x', { role: 'assistant' });
    });
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(findInvariantViolations({ ...graph, rootNodeId: 'msg_x', activeHeadMessageId: 'msg_y' })).toEqual([]);
  });

  it.each(cases)('detects %s', (_, breakIt, violation) => {
    expect(findInvariantViolations(broken(breakIt))).toContainEqual(violation);
  });

  it('reports each broken rule of a graph broken in several ways', () => {
    const graph = broken((each) => {
      each.activeHeadMessageId = 'msg_gone';
      each.nodes.msg_c = { ...each.nodes.msg_c!, status: 'failed' };
    });
    expect(findInvariantViolations(graph)).toEqual(['head msg_gone does not resolve', 'user node msg_c is failed']);
  });
});
