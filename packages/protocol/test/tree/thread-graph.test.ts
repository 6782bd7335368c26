import { describe, expect, it } from 'vitest';
import { applyChange, planFinish, planPrompt, streamingNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { conversation, exchange } from '../support/graphs.js';

/** The graph with `nodeId` streaming again, as a change (a new version) would make it. */
function streamAgain(graph: ThreadGraph, nodeId: string): void {
  const node = graph.nodes[nodeId]!;
  const { threadId, version, rootNodeId, activeHeadMessageId } = graph;
  applyChange(graph, {
    threadId,
    baseVersion: version,
    version: version + 1,
    rootNodeId,
    activeHeadMessageId,
    nodes: [{ ...node, status: 'streaming' }],
  });
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

  describe('after a change applied with applyChange', () => {
    /** The graph's nodes behind a proxy that counts the walks over them. */
    function watched(graph: ThreadGraph): { walks: () => number } {
      let walks = 0;
      graph.nodes = new Proxy(graph.nodes, {
        ownKeys: (target) => {
          walks += 1;
          return Reflect.ownKeys(target);
        },
      });
      return { walks: () => walks };
    }

    it('is found without walking the nodes again: the change carries every node whose status it sets', () => {
      const graph = conversation();
      const nodes = watched(graph);
      expect(streamingNode(graph)?.id).toBe('msg_a2');
      expect(nodes.walks()).toBe(1);

      applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
      expect(streamingNode(graph)).toBeUndefined();
      applyChange(graph, planPrompt(graph, exchange('msg_u3', 'msg_a3')));
      expect(streamingNode(graph)?.id).toBe('msg_a3');
      // A change that removes the node while it streams (planBranchDelete would refuse to).
      const { threadId, version, rootNodeId } = graph;
      const msg_a2 = { ...graph.nodes.msg_a2!, childrenIds: [] };
      applyChange(graph, {
        threadId,
        baseVersion: version,
        version: version + 1,
        rootNodeId,
        activeHeadMessageId: 'msg_a2',
        nodes: [msg_a2],
        removedNodeIds: ['msg_u3', 'msg_a3'],
      });
      expect(streamingNode(graph)).toBeUndefined();
      expect(nodes.walks()).toBe(1);
    });

    it('is looked for again when the change was planned on a version not looked at, or two nodes would stream', () => {
      const graph = conversation();
      const nodes = watched(graph);
      applyChange(graph, planFinish(graph, { nodeId: 'msg_a2', status: 'completed', content: 'done' }));
      expect(streamingNode(graph)).toBeUndefined();
      expect(nodes.walks()).toBe(1);

      streamAgain(graph, 'msg_a1');
      streamAgain(graph, 'msg_a2');
      expect(streamingNode(graph)?.status).toBe('streaming');
      expect(nodes.walks()).toBe(2);
    });
  });
});
