import { describe, expect, it } from 'vitest';
import { branchTip, currentBranch, streamingNode } from '../src/branch.js';
import { TestGraph } from './support/test-graph.js';

const ids = (graph: TestGraph) => currentBranch(graph.graph).map((entry) => entry.node.id);

describe('currentBranch', () => {
  it('is empty for an empty thread', () => {
    expect(currentBranch(new TestGraph().graph)).toEqual([]);
  });

  it('runs from the root to the head', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2);
    expect(ids(tree)).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2']);
  });

  it('stops at an anchored head that has replies below it', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2).anchor('msg_a1');
    expect(ids(tree)).toEqual(['msg_u1', 'msg_a1']);
  });

  it('runs on to an answer streaming below the head', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).anchor('msg_u2');
    expect(ids(tree)).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2']);
  });

  it('does not follow a stream on another branch', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2).anchor('msg_a1').prompt(3).anchor('msg_a2');
    expect(ids(tree)).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2']);
    expect(streamingNode(tree.graph)?.id).toBe('msg_a3');
  });

  it('gives an answer written side by side with others by several models the whole group, and no other answer one', () => {
    const tree = new TestGraph().promptSideBySide(1, 3).finish(1).finish('1b').finish('1c').anchor('msg_a1b');
    const entries = currentBranch(tree.graph);
    expect(entries.map((entry) => entry.node.id)).toEqual(['msg_u1', 'msg_a1b']);
    expect(entries[1]!.sideBySide.map((node) => node.id)).toEqual(['msg_a1', 'msg_a1b', 'msg_a1c']);
    expect(entries[0]!.sideBySide).toEqual([]);
    // An answer written alone has no group.
    tree.prompt(2).finish(2);
    expect(currentBranch(tree.graph).at(-1)!.sideBySide).toEqual([]);
  });

  it('gives each message its sibling group at a fork', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2).anchor('msg_a1').prompt(3).finish(3);
    const fork = currentBranch(tree.graph).find((entry) => entry.node.id === 'msg_u3');
    expect(fork).toMatchObject({ siblingIds: ['msg_u2', 'msg_u3'], siblingIndex: 1 });
    expect(currentBranch(tree.graph)[0]).toMatchObject({ siblingIds: ['msg_u1'], siblingIndex: 0 });
  });

  it('counts only the siblings of the same role: a prompt sent from an anchored prompt is no version of its answers', () => {
    const tree = new TestGraph().prompt(1).finish(1).anchor('msg_u1').prompt(2).finish(2);
    const entries = currentBranch(tree.graph);
    expect(entries.map((entry) => entry.node.id)).toEqual(['msg_u1', 'msg_u2', 'msg_a2']);
    expect(entries[1]).toMatchObject({ siblingIds: ['msg_u2'], siblingIndex: 0 });
  });

  it("gives an edited first prompt the thread's first prompts as its sibling group", () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2).prompt(3, null).finish(3);
    expect(ids(tree)).toEqual(['msg_u3', 'msg_a3']);
    expect(currentBranch(tree.graph)[0]).toMatchObject({ siblingIds: ['msg_u1', 'msg_u3'], siblingIndex: 1 });
    expect(ids(tree.anchor(branchTip(tree.graph, 'msg_u1')))).toEqual(['msg_u1', 'msg_a1', 'msg_u2', 'msg_a2']);
  });
});

describe('branchTip', () => {
  it('follows the most recent child down to a leaf', () => {
    const tree = new TestGraph().prompt(1).finish(1).prompt(2).finish(2).anchor('msg_a1').prompt(3).finish(3);
    expect(branchTip(tree.graph, 'msg_u1')).toBe('msg_a3');
    expect(branchTip(tree.graph, 'msg_u2')).toBe('msg_a2');
    expect(branchTip(tree.graph, 'msg_a3')).toBe('msg_a3');
  });
});
