import { describe, expect, it } from 'vitest';
import { planPivotSplice } from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { conversation, exchange } from '../support/graphs.js';

describe('planPivotSplice', () => {
  it('interrupts the streaming node at the cut, branches the prompt under it and streams the answer from the head', () => {
    const graph = conversation();
    const before = structuredClone(graph);
    const change = planPivotSplice(graph, {
      ...exchange('msg_p', 'msg_pa', 'Rust instead'),
      interruptedNodeId: 'msg_a2',
      cutContent: 'Part',
      model: 'demo',
    });

    expect(graph).toEqual(before);
    expect(change).toMatchObject({ baseVersion: 3, version: 4, rootNodeId: 'msg_u1', activeHeadMessageId: 'msg_pa' });
    expect(change.nodes).toEqual([
      { ...before.nodes.msg_a2, status: 'interrupted', content: 'Part', childrenIds: ['msg_p'] },
      {
        id: 'msg_p',
        parentId: 'msg_a2',
        childrenIds: ['msg_pa'],
        role: 'user',
        content: 'Rust instead',
        status: 'completed',
        createdAt: 1000,
      },
      {
        id: 'msg_pa',
        parentId: 'msg_p',
        childrenIds: [],
        role: 'assistant',
        content: '',
        status: 'streaming',
        createdAt: 1000,
        model: 'demo',
      },
    ]);
  });

  it('keeps an empty cut', () => {
    const change = planPivotSplice(conversation(), {
      ...exchange('msg_p', 'msg_pa'),
      interruptedNodeId: 'msg_a2',
      cutContent: '',
    });
    expect(change.nodes[0]).toMatchObject({ id: 'msg_a2', status: 'interrupted', content: '' });
  });

  it('branches under a node that no longer streams without touching its text or status, after its other children', () => {
    const graph = conversation();
    const change = planPivotSplice(graph, { ...exchange('msg_p', 'msg_pa'), interruptedNodeId: 'msg_a1' });
    expect(change.nodes[0]).toEqual({ ...graph.nodes.msg_a1, childrenIds: ['msg_u2', 'msg_p'] });
    expect(change.activeHeadMessageId).toBe('msg_pa');
  });

  it('branches under a user node', () => {
    const change = planPivotSplice(conversation(), { ...exchange('msg_p', 'msg_pa'), interruptedNodeId: 'msg_u2' });
    expect(change.nodes.find((node) => node.id === 'msg_p')?.parentId).toBe('msg_u2');
  });

  it('refuses an interrupted node that is not in the thread with NOT_FOUND', () => {
    expectCPPError(
      () =>
        planPivotSplice(conversation(), {
          ...exchange('msg_p', 'msg_pa'),
          interruptedNodeId: 'msg_elsewhere',
          cutContent: '',
        }),
      'NOT_FOUND',
    );
  });

  it('refuses a branch id already in the thread with CONFLICT', () => {
    expectCPPError(
      () =>
        planPivotSplice(conversation(), {
          ...exchange('msg_u1', 'msg_pa'),
          interruptedNodeId: 'msg_a2',
          cutContent: '',
        }),
      'CONFLICT',
    );
  });
});
