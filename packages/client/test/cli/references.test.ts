import { applyChange, emptyGraph, planPivotSplice, planPrompt, type ThreadSummary } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { resolveMessage, resolveThread } from '../../src/cli/references.js';

describe('naming a message or a thread in cpp-chat', () => {
  const graph = emptyGraph('thread_names');
  applyChange(
    graph,
    planPrompt(graph, { userNodeId: 'msg_u1', userPrompt: 'Explain SNNs', assistantNodeId: 'msg_a1', createdAt: 1 }),
  );
  applyChange(
    graph,
    planPivotSplice(graph, {
      interruptedNodeId: 'msg_a1',
      userNodeId: 'msg_u2',
      userPrompt: 'Rust',
      assistantNodeId: 'msg_a2',
      createdAt: 1,
    }),
  );

  it('takes the number /tree shows', () => {
    expect(['1', '2', '3', '4'].map((number) => resolveMessage(graph, number))).toEqual([
      'msg_u1',
      'msg_a1',
      'msg_u2',
      'msg_a2',
    ]);
    expect(() => resolveMessage(graph, '5')).toThrow('there is no message 5: /tree numbers them 1 to 4');
    expect(() => resolveMessage(graph, '0')).toThrow('there is no message 0');
  });

  it('takes the start of an id that only one message has, or a whole id', () => {
    expect(resolveMessage(graph, 'msg_a2')).toBe('msg_a2');
    expect(resolveMessage(graph, 'msg_u2')).toBe('msg_u2');
    expect(() => resolveMessage(graph, 'msg_a')).toThrow(
      '2 message ids start with msg_a (msg_a1, msg_a2): type more of it, or its number in /tree',
    );
    expect(() => resolveMessage(graph, 'msg_x')).toThrow('no message id starts with msg_x: /tree lists them');
  });

  it('takes a thread by its number in /threads or the start of its id, and knows none by another name', () => {
    const threads = [
      { threadId: 'thread_alpha' },
      { threadId: 'thread_beta' },
      { threadId: 'thread_bravo' },
    ] as ThreadSummary[];
    expect(resolveThread(threads, '2')).toBe('thread_beta');
    expect(resolveThread(threads, 'thread_a')).toBe('thread_alpha');
    expect(() => resolveThread(threads, 'thread_b')).toThrow('2 thread ids start with thread_b');
    expect(() => resolveThread(threads, '4')).toThrow('there is no thread 4: /threads numbers them 1 to 3');
    expect(resolveThread(threads, 'thread_new')).toBeUndefined();
  });
});
