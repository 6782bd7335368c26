import { ThreadExportSchema, exportThread, threadToMarkdown } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { conversation, handBuiltGraph } from '../support/graphs.js';

describe('exportThread', () => {
  it('is the sync graph with the format, its version and the time, and passes its own schema', () => {
    const graph = conversation();
    const exported = exportThread(graph, 'Greetings', 42);
    expect(exported).toEqual({
      format: 'cpp-thread',
      formatVersion: 1,
      exportedAt: 42,
      thread: {
        threadId: graph.threadId,
        rootNodeId: 'msg_u1',
        activeHeadMessageId: 'msg_a2',
        nodes: graph.nodes,
        version: 3,
        title: 'Greetings',
      },
    });
    expect(ThreadExportSchema.parse(JSON.parse(JSON.stringify(exported)))).toEqual(exported);
    exported.thread.nodes.msg_a1!.content = 'changed';
    expect(graph.nodes.msg_a1!.content).toBe('Hello!');
  });
});

describe('threadToMarkdown', () => {
  it('writes the active branch under the title, each message after its role in bold, an unfinished answer marked', () => {
    expect(threadToMarkdown(conversation(), 'Greetings')).toBe(
      `${[
        '# Greetings',
        [
          '**User**\n\nprompt of msg_u1',
          '**Assistant**\n\nHello!',
          '**User**\n\nprompt of msg_u2',
          '**Assistant (streaming)**\n\nPartial',
        ].join('\n\n---\n\n'),
      ].join('\n\n')}\n`,
    );
  });

  it('leaves other branches out, and names an untitled conversation', () => {
    expect(threadToMarkdown(handBuiltGraph(), '  ')).toBe(
      `# Untitled conversation\n\n${['**User**\n\nmsg_r', '**Assistant**\n\nmsg_a', '**User**\n\nmsg_c'].join('\n\n---\n\n')}\n`,
    );
  });

  it("keeps the title the only heading of its own: an answer's headings are the outline", () => {
    const markdown = threadToMarkdown(conversation(), 'Greetings');
    expect(markdown.match(/^#+ .*$/gm)).toEqual(['# Greetings']);
  });

  it('names the files a message carries after its text, or in its place for a prompt of files alone', () => {
    const graph = handBuiltGraph();
    const file = { size: 1234, sha256: 'a'.repeat(64) };
    graph.nodes.msg_r!.attachments = [
      { ...file, id: 'att_plot', name: 'raster plot.png', mediaType: 'image/png', width: 64, height: 48 },
      { ...file, id: 'att_notes', name: '`odd` name`.md', mediaType: 'text/plain' },
    ];
    graph.nodes.msg_c!.content = '';
    graph.nodes.msg_c!.attachments = [{ ...file, id: 'att_pdf', name: 'paper.pdf', mediaType: 'application/pdf' }];
    expect(threadToMarkdown(graph, 'Files')).toBe(
      `# Files\n\n${[
        'msg_r\n\nFile: `raster plot.png` (image/png, 64×48, 1234 bytes)\n\nFile: `` `odd` name`.md `` (text/plain, 1234 bytes)',
        'msg_a',
        'File: `paper.pdf` (application/pdf, 1234 bytes)',
      ]
        .map((body, index) => `**${index % 2 === 0 ? 'User' : 'Assistant'}**\n\n${body}`)
        .join('\n\n---\n\n')}\n`,
    );
  });

  it('is the title alone for an empty thread', () => {
    expect(threadToMarkdown({ ...handBuiltGraph(), activeHeadMessageId: null }, 'Empty')).toBe('# Empty\n');
  });
});
