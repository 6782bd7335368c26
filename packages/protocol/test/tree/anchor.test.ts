import { describe, expect, it } from 'vitest';
import { emptyGraph, planAnchor } from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { THREAD, conversation } from '../support/graphs.js';

describe('planAnchor', () => {
  it('moves only the head, as a new version', () => {
    const graph = conversation();
    const change = planAnchor(graph, 'msg_u1');
    expect(change).toEqual({
      threadId: THREAD,
      baseVersion: 3,
      version: 4,
      rootNodeId: 'msg_u1',
      activeHeadMessageId: 'msg_u1',
      nodes: [],
    });
    expect(graph.activeHeadMessageId).toBe('msg_a2');
  });

  it('may anchor the head where it already is, still as a new version', () => {
    expect(planAnchor(conversation(), 'msg_a2')).toMatchObject({ version: 4, activeHeadMessageId: 'msg_a2' });
  });

  it('refuses a node that is not in the thread with NOT_FOUND', () => {
    expectCPPError(() => planAnchor(conversation(), 'msg_other'), 'NOT_FOUND');
    expectCPPError(() => planAnchor(emptyGraph(THREAD), 'msg_other'), 'NOT_FOUND');
  });

  it('does not treat inherited object keys as node ids', () => {
    expectCPPError(() => planAnchor(conversation(), 'constructor'), 'NOT_FOUND');
    expectCPPError(() => planAnchor(conversation(), '__proto__'), 'NOT_FOUND');
  });
});
