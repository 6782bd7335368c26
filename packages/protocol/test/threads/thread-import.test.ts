import { readFileSync } from 'node:fs';
import {
  ImportDocumentError,
  exportThread,
  findInvariantViolations,
  firstPrompts,
  nodesInTreeOrder,
  pathToRoot,
  readImportDocument,
  type ImportedThread,
  type MessageNode,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { conversation, handBuiltGraph } from '../support/graphs.js';

const NOW = 1_800_000_000_000;
const chatGptExport = (): unknown[] =>
  JSON.parse(readFileSync(new URL('../fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'));

/** A graph as its shape: each node's role, text and status, children in order; ids left out. */
function shape(graph: ThreadGraph, nodeId = graph.rootNodeId): unknown {
  if (nodeId === null) return null;
  const node = graph.nodes[nodeId]!;
  return {
    role: node.role,
    content: node.content,
    status: node.status,
    children: node.childrenIds.map((id) => shape(graph, id)),
  };
}

/** The texts from the root to the head. */
const activeBranch = (graph: ThreadGraph) =>
  graph.activeHeadMessageId === null ? [] : pathToRoot(graph, graph.activeHeadMessageId).map((node) => node.content);

function expectSound(threads: ImportedThread[]): void {
  for (const { graph } of threads) {
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(graph.version).toBe(0);
  }
}

describe('readImportDocument for a ChatGPT conversations.json', () => {
  it('keeps every conversation as a thread with the same tree, roles, text, order, head, dates and models', () => {
    const threads = readImportDocument('chatgpt', chatGptExport(), NOW);
    expectSound(threads);
    expect(threads.map((thread) => thread.title)).toEqual([
      'Rivers of Europe',
      'Plotting with code',
      'Edited first prompt',
      '',
    ]);

    const [rivers] = threads;
    expect(shape(rivers!.graph)).toEqual({
      role: 'user',
      content: 'Which is the longest river in Europe?',
      status: 'completed',
      children: [
        {
          role: 'assistant',
          content: 'The Volga, at about 3,530 km.',
          status: 'completed',
          children: [
            {
              role: 'user',
              content: 'And in the EU?',
              status: 'completed',
              children: [
                { role: 'assistant', content: 'The Danube.', status: 'completed', children: [] },
                {
                  role: 'assistant',
                  content: 'Within the EU it is the Danube, about 2,850 km.',
                  status: 'completed',
                  children: [],
                },
              ],
            },
            {
              role: 'user',
              content: 'Which countries does it cross?',
              status: 'completed',
              children: [{ role: 'assistant', content: 'Only Russia.', status: 'completed', children: [] }],
            },
          ],
        },
      ],
    });
    expect(activeBranch(rivers!.graph)).toEqual([
      'Which is the longest river in Europe?',
      'The Volga, at about 3,530 km.',
      'And in the EU?',
      'Within the EU it is the Danube, about 2,850 km.',
    ]);
    expect({ createdAt: rivers!.createdAt, updatedAt: rivers!.updatedAt }).toEqual({
      createdAt: 1717000000500,
      updatedAt: 1717000300250,
    });
    const root = rivers!.graph.nodes[rivers!.graph.rootNodeId!]!;
    expect(root.createdAt).toBe(1717000001000);
    expect(root.model).toBeUndefined();
    const models = Object.values(rivers!.graph.nodes).flatMap((node) =>
      node.role === 'assistant' ? [node.model] : [],
    );
    expect(models.sort()).toEqual(['gpt-4o', 'gpt-4o', 'gpt-4o', 'gpt-4o-mini']);
  });

  it('skips system, tool, hidden and textless messages, hanging their children from the message above', () => {
    const [, plotting] = readImportDocument('chatgpt', chatGptExport(), NOW);
    expect(shape(plotting!.graph)).toEqual({
      role: 'user',
      content: 'Plot y = x^2',
      status: 'completed',
      children: [{ role: 'assistant', content: 'Here is the plot of y = x².', status: 'completed', children: [] }],
    });
    expect(activeBranch(plotting!.graph)).toEqual(['Plot y = x^2', 'Here is the plot of y = x².']);
  });

  it('keeps the versions of an edited first prompt in one thread, as siblings in the order written; an empty conversation is an empty thread', () => {
    const [, , edited, empty] = readImportDocument('chatgpt', chatGptExport(), NOW);
    const versions = firstPrompts(edited!.graph);
    expect(versions.map((node) => node.content)).toEqual(['Tell me a joke', 'Tell me a pun']);
    expect(edited!.graph.rootNodeId).toBe(versions[1]!.id);
    expect(activeBranch(edited!.graph)).toEqual([
      'Tell me a pun',
      "I'm reading a book on anti-gravity. It's impossible to put down.",
    ]);
    expect(shape(edited!.graph, versions[0]!.id)).toEqual({
      role: 'user',
      content: 'Tell me a joke',
      status: 'completed',
      children: [
        { role: 'assistant', content: 'Why did the chicken cross the road?', status: 'completed', children: [] },
      ],
    });
    expect(empty!.graph).toMatchObject({ rootNodeId: null, activeHeadMessageId: null, nodes: {} });
    expect({ createdAt: empty!.createdAt, updatedAt: empty!.updatedAt }).toEqual({
      createdAt: 1714000000000,
      updatedAt: 1714000000000,
    });
  });

  it('takes as the head, when current_node is absent, the newest answer of the newest first prompt', () => {
    const document = chatGptExport() as Array<Record<string, unknown>>;
    const [edited] = readImportDocument('chatgpt', [{ ...document[2], current_node: undefined }], NOW);
    expect(activeBranch(edited!.graph)).toEqual([
      'Tell me a pun',
      "I'm reading a book on anti-gravity. It's impossible to put down.",
    ]);
  });

  it('leaves out empty strings of parts rather than joining them as blank lines', () => {
    const mapping = {
      u: {
        message: {
          author: { role: 'user' },
          create_time: null,
          content: { content_type: 'text', parts: ['', 'Hi', ''] },
        },
        parent: null,
        children: [],
      },
    };
    const [thread] = readImportDocument('chatgpt', [{ title: 'Parts', mapping, current_node: 'u' }], NOW);
    expect(Object.values(thread!.graph.nodes).map((node) => node.content)).toEqual(['Hi']);
  });

  it('gives every thread and node a new id each time', () => {
    const first = readImportDocument('chatgpt', chatGptExport(), NOW);
    const second = readImportDocument('chatgpt', chatGptExport(), NOW);
    const ids = (threads: ImportedThread[]) =>
      threads.flatMap(({ graph }) => [graph.threadId, ...Object.keys(graph.nodes)]);
    expect(new Set([...ids(first), ...ids(second)]).size).toBe(ids(first).length * 2);
  });

  it('reads a conversation deeper than the call stack', () => {
    const depth = 15_000;
    const mapping: Record<string, unknown> = {};
    for (let index = 0; index < depth; index += 1) {
      const message = {
        author: { role: index % 2 === 0 ? 'user' : 'assistant' },
        create_time: null,
        content: { content_type: 'text', parts: [`m${index}`] },
      };
      mapping[`n${index}`] = {
        message,
        parent: index === 0 ? null : `n${index - 1}`,
        children: index === depth - 1 ? [] : [`n${index + 1}`],
      };
    }
    const [deep] = readImportDocument('chatgpt', [{ title: 'Deep', mapping, current_node: `n${depth - 1}` }], NOW);
    expect(Object.keys(deep!.graph.nodes)).toHaveLength(depth);
    expect(deep!.createdAt).toBe(NOW);
  });

  it("makes an answer's tool messages tool calls of one assistant node, each result in its call, the text after them a step", () => {
    const [agent] = readImportDocument('chatgpt', [toolConversation()], NOW);
    expectSound([agent!]);
    const graph = agent!.graph;
    expect(shape(graph)).toEqual({
      role: 'user',
      content: 'What is 2 + 2? Then look up CPP.',
      status: 'completed',
      children: [
        {
          role: 'assistant',
          content: 'Let me compute.\n\nThe answer is 4.\n\nFound it.',
          status: 'completed',
          children: [{ role: 'user', content: 'Draw it.', status: 'completed', children: [expect.anything()] }],
        },
      ],
    });
    const answer = graph.nodes[graph.nodes[graph.rootNodeId!]!.childrenIds[0]!]!;
    expect(answer.toolCalls).toEqual([
      {
        toolCallId: expect.stringMatching(/^call_/),
        toolName: 'python',
        step: 0,
        offset: 'Let me compute.'.length,
        state: 'output-available',
        input: '{"code":"print(2 + 2)"}',
        output: '4',
      },
      {
        toolCallId: expect.stringMatching(/^call_/),
        toolName: 'browser',
        step: 1,
        offset: 'Let me compute.\n\nThe answer is 4.'.length,
        state: 'output-available',
        input: '{"text":"search(\\"CPP\\")"}',
        output: 'CPP is the Conversational Pivot Protocol.',
      },
    ]);
    // A call right under a prompt is an answer of its own, empty but for it; an error is the call's error; a call
    // without a result in the export ends in an error that says so.
    const drawing = graph.nodes[graph.activeHeadMessageId!]!;
    expect(drawing).toMatchObject({ role: 'assistant', content: 'I could not draw it.', model: 'gpt-4o' });
    expect(drawing.toolCalls).toMatchObject([
      { toolName: 'dalle.text2im', step: 0, offset: 0, state: 'output-error', errorText: 'Content policy.' },
      {
        toolName: 'python',
        step: 1,
        offset: 'I could not draw it.'.length,
        state: 'output-error',
        input: '{"code":"x"}',
      },
    ]);
    expect(drawing.toolCalls![1]!.errorText).toBe('The ChatGPT export holds no result of this call.');
  });

  it('keeps an answer written again after a tool ran as a node of its own', () => {
    const conversation = toolConversation();
    const mapping = conversation.mapping as Record<string, { parent: string | null; children: string[] }>;
    // A second answer after the python result, beside the first.
    mapping.again = { ...structuredClone(mapping.a2!), parent: 'r1', children: [] };
    (mapping.again as unknown as { message: { content: { parts: string[] } } }).message.content.parts = ['Four.'];
    mapping.r1!.children.push('again');
    const [agent] = readImportDocument('chatgpt', [conversation], NOW);
    expectSound([agent!]);
    const answer = Object.values(agent!.graph.nodes).find((node) => node.toolCalls?.[0]?.toolName === 'python')!;
    expect(answer.content).toBe('Let me compute.');
    expect(answer.childrenIds.map((id) => agent!.graph.nodes[id]!.content)).toEqual([
      'The answer is 4.\n\nFound it.',
      'Four.',
    ]);
  });

  const malformed: Array<[string, (document: any[]) => unknown, RegExp]> = [
    ['not an array', () => ({ conversations: [] }), /not a ChatGPT conversations\.json/],
    ['a mapping that is missing', (document) => [{ ...document[0], mapping: undefined }], /0\.mapping/],
    [
      'a parent that is not in the mapping',
      (document) => withNode(document, 'u2', (node) => ({ ...node, parent: 'nowhere' })),
      /conversation 1 \(Rivers of Europe\): node .*nowhere/,
    ],
    [
      'a child that does not name its parent back',
      (document) => withNode(document, 'a3', (node) => ({ ...node, parent: 'u2' })),
      /conversation 1 \(Rivers of Europe\): node (a3|u2|u3)/,
    ],
    ['a cycle', (document) => cycle(document), /on a cycle/],
    [
      'a part of the wrong type',
      (document) =>
        withNode(document, 'u1', (node) => ({ ...node, message: { ...node.message, author: { role: 7 } } })),
      /author\.role/,
    ],
  ];
  it.each(malformed)('refuses %s, naming what is wrong, and reads nothing', (_name, corrupt, message) => {
    expect(() => readImportDocument('chatgpt', corrupt(chatGptExport()), NOW)).toThrow(ImportDocumentError);
    expect(() => readImportDocument('chatgpt', corrupt(chatGptExport()), NOW)).toThrow(message);
  });
});

/**
 * A conversation that used tools, as ChatGPT exports one: a code run, a browsing call and their results between the
 * assistant's texts; then a drawing call straight under a prompt, its error, text, and a call with no result.
 */
function toolConversation(): Record<string, unknown> {
  const lines: Array<[string, Record<string, unknown>]> = [
    [
      'u1',
      { author: { role: 'user' }, content: { content_type: 'text', parts: ['What is 2 + 2? Then look up CPP.'] } },
    ],
    ['a1', { author: { role: 'assistant' }, content: { content_type: 'text', parts: ['Let me compute.'] } }],
    [
      'c1',
      {
        author: { role: 'assistant' },
        recipient: 'python',
        content: { content_type: 'code', language: 'python', text: 'print(2 + 2)' },
      },
    ],
    ['r1', { author: { role: 'tool', name: 'python' }, content: { content_type: 'execution_output', text: '4' } }],
    ['a2', { author: { role: 'assistant' }, content: { content_type: 'text', parts: ['The answer is 4.'] } }],
    [
      'c2',
      {
        author: { role: 'assistant' },
        recipient: 'browser',
        content: { content_type: 'text', parts: ['search("CPP")'] },
      },
    ],
    [
      'r2',
      {
        author: { role: 'tool', name: 'browser' },
        content: { content_type: 'tether_browsing_display', result: 'CPP is the Conversational Pivot Protocol.' },
      },
    ],
    ['a3', { author: { role: 'assistant' }, content: { content_type: 'text', parts: ['Found it.'] } }],
    ['u2', { author: { role: 'user' }, content: { content_type: 'text', parts: ['Draw it.'] } }],
    [
      'c3',
      {
        author: { role: 'assistant' },
        recipient: 'dalle.text2im',
        content: { content_type: 'text', parts: ['{"prompt":"a pivot"}'] },
        metadata: { model_slug: 'gpt-4o' },
      },
    ],
    [
      'r3',
      {
        author: { role: 'tool', name: 'dalle.text2im' },
        content: { content_type: 'system_error', text: 'Content policy.' },
      },
    ],
    ['a4', { author: { role: 'assistant' }, content: { content_type: 'text', parts: ['I could not draw it.'] } }],
    ['c4', { author: { role: 'assistant' }, recipient: 'python', content: { content_type: 'code', text: 'x' } }],
  ];
  const mapping: Record<string, unknown> = {};
  lines.forEach(([key, message], index) => {
    mapping[key] = {
      message: { create_time: 1716000000 + index, ...message },
      parent: index === 0 ? null : lines[index - 1]![0],
      children: index === lines.length - 1 ? [] : [lines[index + 1]![0]],
    };
  });
  return { title: 'An agent', create_time: 1716000000, update_time: 1716000100, mapping, current_node: 'c4' };
}

function withNode(document: any[], key: string, change: (node: any) => unknown): unknown[] {
  const first = structuredClone(document[0]);
  first.mapping[key] = change(first.mapping[key]);
  return [first, ...document.slice(1)];
}

/** Two nodes that are each other's parent and child, apart from the tree. */
function cycle(document: any[]): unknown[] {
  const first = structuredClone(document[0]);
  first.mapping.x = { message: null, parent: 'y', children: ['y'] };
  first.mapping.y = { message: null, parent: 'x', children: ['x'] };
  return [first, ...document.slice(1)];
}

describe('readImportDocument for CPP JSON', () => {
  it('keeps the tree, the order of siblings, the head and the title under new ids; a streaming node is interrupted', () => {
    const graph = conversation();
    const exported = exportThread(graph, 'A title', NOW);
    const [imported] = readImportDocument('cpp-thread', JSON.parse(JSON.stringify(exported)), NOW + 5);

    expectSound([imported!]);
    expect(imported!.title).toBe('A title');
    expect({ createdAt: imported!.createdAt, updatedAt: imported!.updatedAt }).toEqual({
      createdAt: 1000,
      updatedAt: NOW,
    });
    expect(imported!.graph.threadId).not.toBe(graph.threadId);
    expect(Object.keys(imported!.graph.nodes).some((id) => id in graph.nodes)).toBe(false);
    const withoutIds = (nodes: MessageNode[]) =>
      nodes.map(({ role, content, status, createdAt }) => ({ role, content, status, createdAt }));
    const expected = withoutIds(nodesInTreeOrder(graph)).map((node) =>
      node.status === 'streaming' ? { ...node, status: 'interrupted' } : node,
    );
    expect(withoutIds(nodesInTreeOrder(imported!.graph))).toEqual(expected);
    expect(activeBranch(imported!.graph)).toEqual(activeBranch(graph));
  });

  it('takes a list of exports', () => {
    const threads = readImportDocument(
      'cpp-thread',
      [exportThread(handBuiltGraph(), 'One', NOW), exportThread(conversation(), 'Two', NOW)],
      NOW,
    );
    expect(threads.map((thread) => thread.title)).toEqual(['One', 'Two']);
    expect(shape(threads[0]!.graph)).toEqual(shape(handBuiltGraph()));
  });

  it('refuses another format, a wrong version and an unsound tree', () => {
    const exported = exportThread(handBuiltGraph(), 'One', NOW);
    expect(() => readImportDocument('cpp-thread', { ...exported, formatVersion: 2 }, NOW)).toThrow(
      /not a CPP thread export: formatVersion/,
    );
    expect(() => readImportDocument('cpp-thread', chatGptExport(), NOW)).toThrow(ImportDocumentError);
    const orphan = structuredClone(exported);
    orphan.thread.nodes.msg_c!.parentId = 'msg_b';
    expect(() => readImportDocument('cpp-thread', orphan, NOW)).toThrow(/thread 1 \(thread_test\) is not a sound tree/);
  });

  it('cuts a title longer than a user may give one', () => {
    const [imported] = readImportDocument('cpp-thread', exportThread(handBuiltGraph(), 'x'.repeat(500), NOW), NOW);
    expect(imported!.title).toHaveLength(200);
  });
});

describe('readImportDocument, for text no prompt could hold', () => {
  it('keeps it as every store would: NUL and lone surrogates as U+FFFD, the length unchanged, in titles and messages', () => {
    const graph = handBuiltGraph();
    const [first] = Object.keys(graph.nodes);
    graph.nodes[first!]!.content = 'a\u0000b \ud800 \udc00 🚀';
    const [imported] = readImportDocument('cpp-thread', exportThread(graph, 'x\ud83d', NOW), NOW);
    expect(Object.values(imported!.graph.nodes).map((node) => node.content)).toContain('a\ufffdb \ufffd \ufffd 🚀');
    expect(imported!.title).toBe('x\ufffd');
  });
});
