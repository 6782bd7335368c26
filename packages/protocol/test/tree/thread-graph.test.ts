import { describe, expect, it } from 'vitest';
import { applyChange, planFinish, streamingNode } from '@promethea/cpp-protocol';
import { conversation } from '../support/graphs.js';

describe('streamingNode', () => {
  it('is the node a generation writes, and none once it has ended', () => {
    const graph = conversation();
    expect(streamingNode(graph)?.id).toBe('msg_a2');
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
    expect(streamingNode(graph)).toBeUndefined();
  });
});
