import { describe, expect, it } from 'vitest';
import {
  applyChange,
  emptyGraph,
  findInvariantViolations,
  firstPrompts,
  pathToRoot,
  planAnchor,
  planFinish,
  planPrompt,
} from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { THREAD, conversation, exchange } from '../support/graphs.js';

describe('planPrompt', () => {
  it('makes the first prompt the root and answers it with a streaming assistant node that becomes the head', () => {
    const graph = emptyGraph(THREAD);
    const before = structuredClone(graph);
    const change = planPrompt(graph, { ...exchange('msg_u', 'msg_a', 'Hi'), model: 'demo' });

    expect(graph).toEqual(before);
    expect(change).toEqual({
      threadId: THREAD,
      baseVersion: 0,
      version: 1,
      rootNodeId: 'msg_u',
      activeHeadMessageId: 'msg_a',
      nodes: [
        {
          id: 'msg_u',
          parentId: null,
          childrenIds: ['msg_a'],
          role: 'user',
          content: 'Hi',
          status: 'completed',
          createdAt: 1000,
        },
        {
          id: 'msg_a',
          parentId: 'msg_u',
          childrenIds: [],
          role: 'assistant',
          content: '',
          status: 'streaming',
          createdAt: 1000,
          model: 'demo',
        },
      ],
    });
  });

  it('records no model when none is given', () => {
    const change = planPrompt(emptyGraph(THREAD), exchange('msg_u', 'msg_a'));
    expect(change.nodes[1]).not.toHaveProperty('model');
  });

  it('hangs the prompt under the head when no parent is named, and lists it in the parent', () => {
    const graph = conversation();
    const change = planPrompt(graph, exchange('msg_u3', 'msg_a3'));
    const parent = change.nodes.find((node) => node.id === 'msg_a2');
    expect(parent?.childrenIds).toEqual(['msg_u3']);
    expect(change.nodes.find((node) => node.id === 'msg_u3')?.parentId).toBe('msg_a2');
    expect(change.activeHeadMessageId).toBe('msg_a3');
    expect(change.rootNodeId).toBe('msg_u1');
    expect(change).toMatchObject({ baseVersion: 3, version: 4 });
  });

  it('hangs the prompt under parentNodeId wherever the head is, after its existing children', () => {
    const graph = conversation();
    const change = planPrompt(graph, { ...exchange('msg_u3', 'msg_a3'), parentNodeId: 'msg_a1' });
    expect(change.nodes.find((node) => node.id === 'msg_a1')?.childrenIds).toEqual(['msg_u2', 'msg_u3']);
    expect(change.nodes.map((node) => node.id).sort()).toEqual(['msg_a1', 'msg_a3', 'msg_u3']);
  });

  it('refuses an unknown parent with NOT_FOUND, also in an empty thread', () => {
    expectCPPError(
      () => planPrompt(conversation(), { ...exchange('msg_u3', 'msg_a3'), parentNodeId: 'msg_nope' }),
      'NOT_FOUND',
    );
    expectCPPError(
      () => planPrompt(emptyGraph(THREAD), { ...exchange('msg_u', 'msg_a'), parentNodeId: 'msg_nope' }),
      'NOT_FOUND',
    );
  });

  it('refuses a node id already in the thread with CONFLICT', () => {
    expectCPPError(() => planPrompt(conversation(), exchange('msg_u1', 'msg_a3')), 'CONFLICT');
    expectCPPError(() => planPrompt(conversation(), exchange('msg_u3', 'msg_a1')), 'CONFLICT');
  });

  it('refuses the same id for the user and the assistant node with CONFLICT', () => {
    expectCPPError(() => planPrompt(emptyGraph(THREAD), exchange('msg_x', 'msg_x')), 'CONFLICT');
  });

  it('adds with parentNodeId null a first prompt beside the first: its versions are siblings, the root follows the head', () => {
    const graph = conversation();
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'Done' }));
    const change = planPrompt(graph, {
      ...exchange('msg_v2', 'msg_b2', 'Rephrased'),
      createdAt: 2000,
      parentNodeId: null,
    });
    expect(change).toMatchObject({ rootNodeId: 'msg_v2', activeHeadMessageId: 'msg_b2' });
    expect(change.nodes.map((node) => [node.id, node.parentId])).toEqual([
      ['msg_v2', null],
      ['msg_b2', 'msg_v2'],
    ]);
    applyChange(graph, change);
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(firstPrompts(graph).map((node) => node.id)).toEqual(['msg_u1', 'msg_v2']);
    expect(pathToRoot(graph, 'msg_b2').map((node) => node.id)).toEqual(['msg_v2', 'msg_b2']);
    // Back on the first version's branch, the root is the first version again.
    expect(planAnchor(graph, 'msg_a2').rootNodeId).toBe('msg_u1');
  });
});
