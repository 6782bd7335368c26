import { describe, expect, it } from 'vitest';
import {
  applyChunk,
  applyHalted,
  applyPatch,
  findInvariantViolations,
  graphFromSync,
  type SyncGraphFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { serverSamples } from '../support/sample-frames.js';

const syncPayload: SyncGraphFrame['payload'] = serverSamples.CPP_SYNC_GRAPH.payload;
const STREAMING = 'msg_01h8v1';

/** A mirror whose streaming node holds `content`. */
function mirrorWith(content: string): ThreadGraph {
  const graph = graphFromSync(syncPayload);
  graph.nodes[STREAMING]!.content = content;
  return graph;
}

function expectUnchanged(graph: ThreadGraph, action: (graph: ThreadGraph) => string, outcome: string): void {
  const before = structuredClone(graph);
  expect(action(graph)).toBe(outcome);
  expect(graph).toEqual(before);
}

describe('graphFromSync', () => {
  it('copies the sync into a graph the caller may edit', () => {
    const graph = graphFromSync(syncPayload);
    expect(graph).toEqual({
      threadId: syncPayload.threadId,
      rootNodeId: syncPayload.rootNodeId,
      activeHeadMessageId: syncPayload.activeHeadMessageId,
      version: 1,
      nodes: syncPayload.nodes,
    });
    graph.nodes[STREAMING]!.content += ' more';
    expect(syncPayload.nodes[STREAMING]?.content).toBe('Spiking Neural Networks are…');
  });
});

describe('applyPatch', () => {
  const patch = {
    threadId: syncPayload.threadId,
    version: 2,
    rootNodeId: 'msg_01h8v0',
    activeHeadMessageId: 'msg_01h8v0',
    nodes: { [STREAMING]: { ...syncPayload.nodes[STREAMING]!, status: 'interrupted' as const, content: 'Spiking' } },
  };

  it('applies the next version: replaces the listed nodes and moves root and head', () => {
    const graph = graphFromSync(syncPayload);
    expect(applyPatch(graph, patch)).toBe('applied');
    expect(graph.version).toBe(2);
    expect(graph.activeHeadMessageId).toBe('msg_01h8v0');
    expect(graph.nodes[STREAMING]).toEqual(patch.nodes[STREAMING]);
    expect(graph.nodes.msg_01h8v0).toEqual(syncPayload.nodes.msg_01h8v0);
  });

  it('removes the nodes a patch lists as removed', () => {
    const graph = graphFromSync(syncPayload);
    const root = { ...syncPayload.nodes.msg_01h8v0!, childrenIds: [] };
    const removal = { ...patch, nodes: { msg_01h8v0: root }, removedNodeIds: [STREAMING] };
    expect(applyPatch(graph, removal)).toBe('applied');
    expect(graph.nodes).toEqual({ msg_01h8v0: root });
    expect(findInvariantViolations(graph)).toEqual([]);
  });

  it('keeps its own copy of the patched nodes', () => {
    const graph = graphFromSync(syncPayload);
    applyPatch(graph, patch);
    graph.nodes[STREAMING]!.content = 'changed';
    expect(patch.nodes[STREAMING].content).toBe('Spiking');
  });

  it('ignores a patch the mirror already holds', () => {
    expectUnchanged(graphFromSync(syncPayload), (graph) => applyPatch(graph, { ...patch, version: 1 }), 'stale');
    expectUnchanged(graphFromSync(syncPayload), (graph) => applyPatch(graph, { ...patch, version: 0 }), 'stale');
  });

  it('reports a gap when a version was missed, and changes nothing', () => {
    expectUnchanged(graphFromSync(syncPayload), (graph) => applyPatch(graph, { ...patch, version: 3 }), 'gap');
  });
});

describe('applyChunk', () => {
  const chunk = (offset: number, delta: string) => ({
    threadId: syncPayload.threadId,
    nodeId: STREAMING,
    offset,
    delta,
  });

  it('appends a chunk at the end of the text', () => {
    const graph = mirrorWith('Hello');
    expect(applyChunk(graph, chunk(5, ', world'))).toBe('applied');
    expect(graph.nodes[STREAMING]?.content).toBe('Hello, world');
  });

  it('appends only the unknown part of a chunk that overlaps the text', () => {
    const graph = mirrorWith('Hello, wo');
    expect(applyChunk(graph, chunk(5, ', world'))).toBe('applied');
    expect(graph.nodes[STREAMING]?.content).toBe('Hello, world');
  });

  it('ignores a chunk already held', () => {
    expectUnchanged(mirrorWith('Hello, world'), (graph) => applyChunk(graph, chunk(5, ', world')), 'stale');
    expectUnchanged(mirrorWith('Hello'), (graph) => applyChunk(graph, chunk(0, 'He')), 'stale');
  });

  it('reports a gap for a chunk past the end of the text or of an unknown node', () => {
    expectUnchanged(mirrorWith('Hello'), (graph) => applyChunk(graph, chunk(6, 'world')), 'gap');
    expectUnchanged(
      mirrorWith('Hello'),
      (graph) => applyChunk(graph, { ...chunk(0, 'x'), nodeId: 'msg_unknown' }),
      'gap',
    );
  });
});

describe('applyHalted', () => {
  const halted = (finalContentLength: number, interruptedNodeId = STREAMING) => ({
    interruptedNodeId,
    finalContentLength,
    lastChunkReceived: '',
    threadId: syncPayload.threadId,
    reason: 'pivot' as const,
  });

  it('trims the text to the final length', () => {
    const graph = mirrorWith('Hello, world');
    expect(applyHalted(graph, halted(5))).toBe('applied');
    expect(graph.nodes[STREAMING]?.content).toBe('Hello');
  });

  it('keeps text that is exactly the final length', () => {
    const graph = mirrorWith('Hello');
    expect(applyHalted(graph, halted(5))).toBe('applied');
    expect(graph.nodes[STREAMING]?.content).toBe('Hello');
  });

  it('reports a gap when the mirror holds less text than the final length, or not the node', () => {
    expectUnchanged(mirrorWith('Hel'), (graph) => applyHalted(graph, halted(5)), 'gap');
    expectUnchanged(mirrorWith('Hel'), (graph) => applyHalted(graph, halted(0, 'msg_unknown')), 'gap');
  });
});

describe('reasoning, a part of its own', () => {
  const reasoningChunk = (offset: number, delta: string) => ({
    threadId: syncPayload.threadId,
    nodeId: STREAMING,
    offset,
    delta,
    part: 'reasoning' as const,
  });

  it('appends reasoning chunks at their offset in the reasoning, apart from the content', () => {
    const graph = mirrorWith('');
    expect(applyChunk(graph, reasoningChunk(0, 'Let me'))).toBe('applied');
    expect(applyChunk(graph, reasoningChunk(3, ' me think'))).toBe('applied');
    expect(applyChunk(graph, { ...reasoningChunk(0, 'Answer'), part: 'content' })).toBe('applied');
    expect(graph.nodes[STREAMING]).toMatchObject({ reasoning: 'Let me think', content: 'Answer' });
  });

  it('ignores reasoning already held and reports a gap past its end', () => {
    const graph = mirrorWith('');
    applyChunk(graph, reasoningChunk(0, 'Hmm'));
    expectUnchanged(graph, (g) => applyChunk(g, reasoningChunk(0, 'Hm')), 'stale');
    expectUnchanged(graph, (g) => applyChunk(g, reasoningChunk(4, 'x')), 'gap');
  });

  it('trims the reasoning to its final length and keeps the empty answer; a node without reasoning has none', () => {
    const graph = mirrorWith('');
    applyChunk(graph, reasoningChunk(0, 'Let me think'));
    const halted = {
      interruptedNodeId: STREAMING,
      finalContentLength: 0,
      finalReasoningLength: 6,
      part: 'reasoning' as const,
      lastChunkReceived: 'Let me',
      threadId: syncPayload.threadId,
      reason: 'pivot' as const,
    };
    expect(applyHalted(graph, halted)).toBe('applied');
    expect(graph.nodes[STREAMING]).toMatchObject({ reasoning: 'Let me', content: '' });
    expect(applyHalted(graph, { ...halted, finalReasoningLength: 0 })).toBe('applied');
    expect(graph.nodes[STREAMING]).not.toHaveProperty('reasoning');
    expectUnchanged(mirrorWith(''), (g) => applyHalted(g, halted), 'gap');
  });
});
