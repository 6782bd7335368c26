import { describe, expect, it } from 'vitest';
import { planFinish } from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { conversation } from '../support/graphs.js';

describe('planFinish', () => {
  it.each(['completed', 'interrupted', 'failed'] as const)(
    'ends the streaming node as %s with its final text, head unmoved',
    (status) => {
      const graph = conversation();
      const change = planFinish(graph, { nodeId: 'msg_a2', status, content: 'Partial text' });
      expect(change).toMatchObject({ baseVersion: 3, version: 4, activeHeadMessageId: 'msg_a2', rootNodeId: 'msg_u1' });
      expect(change.nodes).toEqual([{ ...graph.nodes.msg_a2, status, content: 'Partial text' }]);
      expect(change.nodes[0]).not.toHaveProperty('usage');
      expect(graph.nodes.msg_a2?.status).toBe('streaming');
    },
  );

  it('records the token usage when given', () => {
    const change = planFinish(conversation(), {
      nodeId: 'msg_a2',
      status: 'completed',
      content: 'x',
      usage: { inputTokens: 3, outputTokens: 1 },
    });
    expect(change.nodes[0]?.usage).toEqual({ inputTokens: 3, outputTokens: 1 });
  });

  it('refuses a node that is not streaming', () => {
    expect(() => planFinish(conversation(), { nodeId: 'msg_a1', status: 'completed', content: 'again' })).toThrow(
      /not streaming/,
    );
    expect(() => planFinish(conversation(), { nodeId: 'msg_u2', status: 'interrupted', content: '' })).toThrow(
      /not streaming/,
    );
  });

  it('refuses an unknown node with NOT_FOUND', () => {
    expectCPPError(
      () => planFinish(conversation(), { nodeId: 'msg_gone', status: 'failed', content: '' }),
      'NOT_FOUND',
    );
  });
});
