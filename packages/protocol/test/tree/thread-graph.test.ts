import { describe, expect, it } from 'vitest';
import { applyChange, planFinish, streamingNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { conversation } from '../support/graphs.js';

/** The graph with `nodeId` streaming again, as a change (a new version) would make it. */
function streamAgain(graph: ThreadGraph, nodeId: string): void {
  const node = graph.nodes[nodeId]!;
  const { threadId, version, rootNodeId, activeHeadMessageId } = graph;
  applyChange(graph, { threadId, baseVersion: version, version: version + 1, rootNodeId, activeHeadMessageId, nodes: [{ ...node, status: 'streaming' }] });
}

describe('streamingNode', () => {
  it('is the node a generation writes, and none once it has ended', () => {
    const graph = conversation();
    expect(streamingNode(graph)?.id).toBe('msg_a2');
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
    expect(streamingNode(graph)).toBeUndefined();
  });

  it('is a node a later change starts streaming, after a look found none', () => {
    const graph = conversation();
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
    expect(streamingNode(graph)).toBeUndefined();
    streamAgain(graph, 'msg_a2');
    expect(streamingNode(graph)?.status).toBe('streaming');
  });

  it('is the streaming node of nodes a reload put in place, at the same version', () => {
    const graph = conversation();
    const reloaded = structuredClone(graph.nodes);
    applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
    expect(streamingNode(graph)).toBeUndefined();
    Object.assign(graph, { nodes: reloaded });
    expect(streamingNode(graph)).toBe(reloaded.msg_a2);
  });

  it('has the text chunks appended since it was found', () => {
    const graph = conversation();
    streamingNode(graph)!.content += ' more';
    expect(streamingNode(graph)?.content).toBe(graph.nodes.msg_a2!.content);
    expect(streamingNode(graph)?.content.endsWith(' more')).toBe(true);
  });
});
