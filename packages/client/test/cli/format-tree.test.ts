import { applyChange, emptyGraph, planPivotSplice, planPrompt } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { formatTree } from '../../src/cli/format-tree.js';

describe('formatTree', () => {
  it('numbers the messages, draws branches, keeps lone children in their column and marks the head', () => {
    const graph = emptyGraph('thread_tree');
    const createdAt = 1;
    applyChange(
      graph,
      planPrompt(graph, { userNodeId: 'msg_u1', userPrompt: 'Explain\nSNNs', assistantNodeId: 'msg_a1', createdAt }),
    );
    graph.nodes.msg_a1!.content = 'Spiking neural networks are';
    applyChange(
      graph,
      planPivotSplice(graph, {
        interruptedNodeId: 'msg_a1',
        cutContent: 'Spiking neural',
        userNodeId: 'msg_u2',
        userPrompt: 'Rust',
        assistantNodeId: 'msg_a2',
        createdAt,
      }),
    );
    applyChange(
      graph,
      planPivotSplice(graph, {
        interruptedNodeId: 'msg_a1',
        userNodeId: 'msg_u3',
        userPrompt: 'Go',
        assistantNodeId: 'msg_a3',
        createdAt,
      }),
    );

    expect(formatTree(graph)).toBe(
      [
        '1  msg_u1 user completed "Explain SNNs"',
        '2  msg_a1 assistant interrupted "Spiking neural"',
        '3  ├─ msg_u2 user completed "Rust"',
        '4  │  msg_a2 assistant streaming ""',
        '5  └─ msg_u3 user completed "Go"',
        '6     msg_a3 assistant streaming ""  <- head',
      ].join('\n'),
    );
  });

  it('shortens long text', () => {
    const graph = emptyGraph('thread_long');
    applyChange(
      graph,
      planPrompt(graph, { userNodeId: 'msg_u', userPrompt: 'x'.repeat(100), assistantNodeId: 'msg_a', createdAt: 1 }),
    );
    expect(formatTree(graph).split('\n')[0]).toBe(`1  msg_u user completed "${'x'.repeat(59)}…"`);
  });

  it("says which messages an answer's model did not see, to fit its context window", () => {
    const graph = emptyGraph('thread_fitted');
    for (const turn of [1, 2, 3]) {
      const ids = { userNodeId: `msg_u${turn}`, assistantNodeId: `msg_a${turn}` };
      applyChange(graph, planPrompt(graph, { ...ids, userPrompt: `prompt ${turn}`, createdAt: turn }));
    }
    graph.nodes.msg_a3!.context = { fromNodeId: 'msg_a2', omittedNodes: 2 };
    expect(formatTree(graph).split('\n').at(-1)).toBe(
      '6  msg_a3 assistant streaming ""  [its model did not see 2 messages: it read the first, then from 4 on]  <- head',
    );
  });

  it('says when the thread is empty', () => {
    expect(formatTree(emptyGraph('thread_empty'))).toBe('(empty thread)');
  });
});
