import { describe, expect, it } from 'vitest';
import { emptyGraph, planPrompt } from '@promethea/cpp-protocol';
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
});
