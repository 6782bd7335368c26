import { readFileSync } from 'node:fs';
import { type ImportedThread, readImportDocument } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { packThread, unpackThread } from '../../src/threads/packed-threads.js';

const chatGptExport = (): unknown =>
  JSON.parse(
    readFileSync(new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
  );

/** A thread whose nodes carry every optional field, and which has the files and images an import brings. */
function richThread(): ImportedThread {
  return {
    title: 'Everything',
    createdAt: 1,
    updatedAt: 9,
    files: { abc: 'aGVsbG8=' },
    imageFileIds: { msg_b: ['file-Photo1'] },
    graph: {
      threadId: 'thread_t',
      rootNodeId: 'msg_a',
      activeHeadMessageId: 'msg_b',
      version: 0,
      nodes: {
        msg_a: {
          id: 'msg_a',
          parentId: null,
          childrenIds: ['msg_b', 'msg_c'],
          role: 'user',
          content: 'Look',
          status: 'completed',
          createdAt: 1,
          authorDid: 'did:example:alice',
          attachments: [
            { id: 'att_a', name: 'a.png', mediaType: 'image/png', size: 5, sha256: 'abc', width: 1, height: 1 },
          ],
        },
        msg_b: {
          id: 'msg_b',
          parentId: 'msg_a',
          childrenIds: [],
          role: 'assistant',
          content: 'A picture',
          reasoning: 'It is small',
          status: 'interrupted',
          createdAt: 2,
          model: 'gpt-4o',
          usage: { inputTokens: 3, outputTokens: 4 },
          toolCalls: [
            {
              toolCallId: 'call_a',
              toolName: 'python',
              step: 0,
              offset: 9,
              state: 'output-available',
              input: '{}',
              output: '1',
            },
          ],
          context: { fromNodeId: 'msg_a', omittedNodes: 1, summary: 'Looked' },
        },
        msg_c: {
          id: 'msg_c',
          parentId: 'msg_a',
          childrenIds: [],
          role: 'assistant',
          content: '',
          status: 'failed',
          createdAt: 3,
        },
      },
    },
  };
}

describe('packThread', () => {
  it('packs a thread into what a structured clone carries back as the same thread, field for field', () => {
    const threads = [...readImportDocument('chatgpt', chatGptExport(), 5), richThread()];
    for (const thread of threads) {
      // toStrictEqual: no field may come back as undefined where the thread had none.
      expect(unpackThread(structuredClone(packThread(thread)))).toStrictEqual(thread);
    }
  });
});
