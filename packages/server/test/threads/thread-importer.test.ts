import { readFileSync } from 'node:fs';
import { readImportDocument } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ATTACHMENT_LIMITS } from '../../src/attachments/attachment-options.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { importThreads } from '../../src/threads/thread-importer.js';

const chatGptExport = (): unknown[] =>
  JSON.parse(
    readFileSync(new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
  );
const NO_LIMITS = {
  maxThreadsPerDid: 0,
  maxNodesPerThread: 0,
  maxThreadBytes: 0,
  maxPromptLength: 0,
  files: DEFAULT_ATTACHMENT_LIMITS,
};

describe('importThreads (CPP_THREAD_IMPORT)', () => {
  it("reads a document's conversations, checks their limits and keeps their files in slices, serving the event loop between them, into the threads a whole read gives", async () => {
    const document = Array.from({ length: 5 }, chatGptExport).flat();
    const store = new MemoryStore();
    let turns = 0;
    const turn = () => {
      turns += 1;
      if (!done) setImmediate(turn);
    };
    let done = false;
    setImmediate(turn);

    const summaries = await importThreads(store, 'did:example:alice', 'chatgpt', document, {
      ...NO_LIMITS,
      maxNodesPerThread: 10_000,
    });
    done = true;

    // The memory store answers without a turn of the loop: every turn counted came from the reading, the checks of
    // the limits and the keeping of files, each turning every 4 conversations.
    expect(turns).toBeGreaterThanOrEqual(3 * (Math.ceil(document.length / 4) - 1));
    const whole = readImportDocument('chatgpt', document, Date.now());
    expect(summaries.map(({ title, nodeCount }) => ({ title, nodeCount }))).toEqual(
      whole.map(({ title, graph }) => ({ title, nodeCount: Object.keys(graph.nodes).length })),
    );
  });

  it('leaves out a ChatGPT prompt of an image alone when no archive brings the image (a conversations.json alone)', async () => {
    const store = new MemoryStore();
    const conversation = {
      title: 'A picture',
      create_time: 1,
      current_node: 'b',
      mapping: {
        a: {
          parent: null,
          children: ['b'],
          message: {
            author: { role: 'user' },
            content: {
              content_type: 'multimodal_text',
              parts: [{ content_type: 'image_asset_pointer', asset_pointer: 'file-service://file-Cat1' }],
            },
          },
        },
        b: {
          parent: 'a',
          children: [],
          message: { author: { role: 'assistant' }, content: { content_type: 'text', parts: ['A cat.'] } },
        },
      },
    };

    const [summary] = await importThreads(store, 'did:example:alice', 'chatgpt', [conversation], NO_LIMITS);

    const { graph } = (await store.loadThread(summary!.threadId))!;
    expect(summary?.nodeCount).toBe(1);
    expect(Object.values(graph.nodes)).toMatchObject([{ role: 'assistant', content: 'A cat.', parentId: null }]);
    expect(graph.rootNodeId).toBe(graph.activeHeadMessageId);
    expect(graph.nodes[graph.rootNodeId!]?.content).toBe('A cat.');
  });
});
