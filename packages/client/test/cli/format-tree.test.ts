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

  it('says when the thread is empty', () => {
    expect(formatTree(emptyGraph('thread_empty'))).toBe('(empty thread)');
  });
});
