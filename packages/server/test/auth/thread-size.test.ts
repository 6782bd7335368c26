import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
});
