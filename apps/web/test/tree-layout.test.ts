import { applyChange, emptyGraph, planPrompt, type ThreadGraph } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { layoutTree } from '../src/lib/tree-layout.js';

function prompt(graph: ThreadGraph, n: number, parentNodeId?: string | null): void {
  const input = { userNodeId: `msg_u${n}`, userPrompt: `prompt ${n}`, assistantNodeId: `msg_a${n}`, createdAt: n };
  applyChange(graph, planPrompt(graph, parentNodeId === undefined ? input : { ...input, parentNodeId }));
}

const cells = (graph: ThreadGraph) =>
  Object.fromEntries(layoutTree(graph).nodes.map((node) => [node.id, [node.depth, node.column]]));

describe('layoutTree', () => {
  it('places nothing for an empty thread', () => {
    expect(layoutTree(emptyGraph('thread_t'))).toEqual({ nodes: [], columns: 0, rows: 0 });
  });

  it('keeps a conversation without forks in one column', () => {
    const graph = emptyGraph('thread_t');
    prompt(graph, 1);
    prompt(graph, 2);
    expect(cells(graph)).toEqual({ msg_u1: [0, 0], msg_a1: [1, 0], msg_u2: [2, 0], msg_a2: [3, 0] });
    expect(layoutTree(graph)).toMatchObject({ columns: 1, rows: 4 });
  });

  it('opens a new column for each later branch, after the columns of the earlier ones', () => {
    const graph = emptyGraph('thread_t');
    prompt(graph, 1);
    prompt(graph, 2);
    prompt(graph, 3);
    prompt(graph, 4, 'msg_a2'); // a sibling of prompt 3: the next column
    prompt(graph, 5, 'msg_a1'); // a sibling of prompt 2, whose subtree already took two columns
    expect(cells(graph)).toEqual({
      msg_u1: [0, 0],
      msg_a1: [1, 0],
      msg_u2: [2, 0],
      msg_a2: [3, 0],
      msg_u3: [4, 0],
      msg_a3: [5, 0],
      msg_u4: [4, 1],
      msg_a4: [5, 1],
      msg_u5: [2, 2],
      msg_a5: [3, 2],
    });
    expect(layoutTree(graph)).toMatchObject({ columns: 3, rows: 6 });
  });

  it('places the versions of an edited first prompt side by side, on the top row', () => {
    const graph = emptyGraph('thread_t');
    prompt(graph, 1);
    prompt(graph, 2);
    prompt(graph, 3, null);
    expect(cells(graph)).toEqual({
      msg_u1: [0, 0],
      msg_a1: [1, 0],
      msg_u2: [2, 0],
      msg_a2: [3, 0],
      msg_u3: [0, 1],
      msg_a3: [1, 1],
    });
  });
});
