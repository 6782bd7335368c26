import { describe, expect, it } from 'vitest';
import { applyChange, planAnchor, planPrompt } from '@promethea/cpp-protocol';
import { conversation, exchange } from '../support/graphs.js';

describe('applyChange', () => {
  it('applies a planned change: nodes, root, head and version', () => {
    const graph = conversation();
    const change = planPrompt(graph, { ...exchange('msg_u3', 'msg_a3'), parentNodeId: 'msg_a1' });
    applyChange(graph, change);
    expect(graph.version).toBe(4);
    expect(graph.activeHeadMessageId).toBe('msg_a3');
    expect(graph.nodes.msg_a1?.childrenIds).toEqual(['msg_u2', 'msg_u3']);
    expect(graph.nodes.msg_a3?.status).toBe('streaming');
  });

  it('refuses a change planned against another version and changes nothing', () => {
    const graph = conversation();
    const first = planAnchor(graph, 'msg_u1');
    const second = planAnchor(graph, 'msg_a1');
    applyChange(graph, first);
    const before = structuredClone(graph);
    expect(() => applyChange(graph, second)).toThrow(/@3 applied to thread_test@4/);
    expect(graph).toEqual(before);
  });

  it('refuses a change of another thread and changes nothing', () => {
    const graph = conversation();
    const change = { ...planAnchor(graph, 'msg_u1'), threadId: 'thread_other' };
    const before = structuredClone(graph);
    expect(() => applyChange(graph, change)).toThrow(/thread_other/);
    expect(graph).toEqual(before);
  });
});
