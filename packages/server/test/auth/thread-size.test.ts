import fc from 'fast-check';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { MessageNode } from '@promethea/cpp-protocol';
import { jsonTextBytes, threadSize } from '../../src/auth/limits/thread-size.js';

const asJson = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

describe('the text bytes the thread limit counts', () => {
  it('are the UTF-8 bytes of the text as JSON writes it, escapes included', () => {
    for (const text of ['plain', '🚀 é', '"\\', '\n\t\r\b\f', '\u0001\u001f', '\ud800', 'a\udc00b', '\ud83d\ude80\ud83d']) {
      expect(jsonTextBytes(text), JSON.stringify(text)).toBe(asJson(text));
    }
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => jsonTextBytes(text) === asJson(text)));
  });

  it("count every node's reasoning beside its text: a sync carries both", () => {
    const node = { parentId: null, childrenIds: [], createdAt: 1, status: 'completed' as const };
    const graph = {
      threadId: 'thread_t',
      rootNodeId: 'msg_u',
      activeHeadMessageId: 'msg_a',
      version: 2,
      nodes: {
        msg_u: { ...node, id: 'msg_u', role: 'user' as const, content: 'Hi', childrenIds: ['msg_a'] },
        msg_a: { ...node, id: 'msg_a', parentId: 'msg_u', role: 'assistant' as const, content: 'Hello', reasoning: 'A "greeting".' },
      },
    };
    expect(threadSize(graph)).toEqual({ nodes: 2, bytes: 2 + 5 + asJson('A "greeting".') });
  });

  it('read again only the nodes whose text changed since the last count', () => {
    const nodes: Record<string, MessageNode> = {};
    for (let index = 0; index < 1000; index += 1) {
      const id = `msg_${index}`;
      nodes[id] = { id, parentId: null, childrenIds: [], createdAt: 1, status: 'completed', role: 'assistant', content: `answer ${index} "quoted"`, reasoning: `why ${index}` };
    }
    const graph = { threadId: 'thread_t', rootNodeId: null, activeHeadMessageId: null, version: 1, nodes };
    const fresh = () => Object.values(nodes).reduce((bytes, node) => bytes + asJson(node.content) + asJson(node.reasoning ?? ''), 0);
    const before = fresh();
    const reads = vi.spyOn(Buffer, 'byteLength');
    onTestFinished(() => reads.mockRestore());

    const first = threadSize(graph);
    expect(first).toEqual({ nodes: 1000, bytes: before });
    expect(reads).toHaveBeenCalledTimes(2000);
    reads.mockClear();
    expect(threadSize(graph)).toEqual(first);
    expect(reads).not.toHaveBeenCalled();

    // A streaming answer's text grows (a new string in place of the old), a cut shortens one, reasoning goes.
    nodes.msg_7!.content += ' and more, \u0001';
    nodes.msg_8!.content = nodes.msg_8!.content.slice(0, 3);
    delete nodes.msg_9!.reasoning;
    nodes.msg_new = { ...nodes.msg_1!, id: 'msg_new', content: 'new' };
    const size = threadSize(graph);
    expect(reads).toHaveBeenCalledTimes(8);
    reads.mockRestore();
    expect(size).toEqual({ nodes: 1001, bytes: fresh() });
  });
});
