import { describe, expect, it } from 'vitest';
import { GraphDraft, emptyGraph } from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { THREAD, handBuiltGraph, node } from '../support/graphs.js';

describe('GraphDraft', () => {
  it('reads its own edits before the graph and leaves the graph untouched', () => {
    const graph = handBuiltGraph();
    const before = structuredClone(graph);
    const draft = new GraphDraft(graph);
    draft.insert(node('msg_d', 'msg_b'));
    draft.update('msg_b', { content: 'edited' });
    expect(draft.get('msg_b')).toMatchObject({ content: 'edited', childrenIds: ['msg_d'] });
    expect(draft.find('msg_d')?.parentId).toBe('msg_b');
    expect(graph).toEqual(before);
  });

  it('lists a node edited several times once in the change, with every edit', () => {
    const draft = new GraphDraft(handBuiltGraph());
    draft.insert(node('msg_d', 'msg_b'));
    draft.insert(node('msg_e', 'msg_b'));
    draft.update('msg_b', { status: 'failed' });
    const change = draft.toChange();
    expect(change.nodes.map((each) => each.id)).toEqual(['msg_b', 'msg_d', 'msg_e']);
    expect(change.nodes[0]).toMatchObject({ childrenIds: ['msg_d', 'msg_e'], status: 'failed' });
  });

  it('makes the first node of an empty thread its root', () => {
    const draft = new GraphDraft(emptyGraph(THREAD));
    draft.insert(node('msg_r', null));
    draft.setHead('msg_r');
    expect(draft.toChange()).toMatchObject({
      rootNodeId: 'msg_r',
      activeHeadMessageId: 'msg_r',
      baseVersion: 0,
      version: 1,
    });
  });

  it('adds a second first prompt beside the first, and the root follows the head onto it', () => {
    const draft = new GraphDraft(handBuiltGraph());
    draft.insert(node('msg_r2', null));
    expect(draft.toChange().rootNodeId).toBe('msg_r');
    draft.setHead('msg_r2');
    const change = draft.toChange();
    expect(change.rootNodeId).toBe('msg_r2');
    expect(change.nodes.map((changed) => changed.id)).toEqual(['msg_r2']);
  });

  it('refuses an id already in the graph or in the draft with CONFLICT', () => {
    expectCPPError(() => new GraphDraft(handBuiltGraph()).insert(node('msg_c', 'msg_b')), 'CONFLICT');
    const draft = new GraphDraft(handBuiltGraph());
    draft.insert(node('msg_d', 'msg_b'));
    expectCPPError(() => draft.insert(node('msg_d', 'msg_c')), 'CONFLICT');
  });

  it('refuses an unknown parent, update target or head with NOT_FOUND', () => {
    expectCPPError(() => new GraphDraft(handBuiltGraph()).insert(node('msg_d', 'msg_x')), 'NOT_FOUND');
    expectCPPError(() => new GraphDraft(handBuiltGraph()).update('msg_x', { content: '' }), 'NOT_FOUND');
    expectCPPError(() => new GraphDraft(handBuiltGraph()).setHead('msg_x'), 'NOT_FOUND');
  });

  it('refuses to insert a node that already has children', () => {
    expect(() => new GraphDraft(handBuiltGraph()).insert(node('msg_d', 'msg_b', { childrenIds: ['msg_e'] }))).toThrow(
      /leaf/,
    );
  });
});
