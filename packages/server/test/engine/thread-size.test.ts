import fc from 'fast-check';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { applyChange, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { applyCountedChange, jsonTextBytes, threadSize } from '../../src/engine/thread-size.js';

const asJson = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** The thread's bytes, counted from scratch. */
const recount = (graph: ThreadGraph) =>
  Object.values(graph.nodes).reduce((bytes, node) => bytes + asJson(node.content) + asJson(node.reasoning ?? ''), 0);

/** A change's header, on top of the graph's version. */
const header = ({ threadId, version, rootNodeId, activeHeadMessageId }: ThreadGraph) => ({
  threadId,
  baseVersion: version,
  version: version + 1,
  rootNodeId,
  activeHeadMessageId,
});

const NODE = {
  parentId: null,
  childrenIds: [],
  createdAt: 1,
  status: 'completed',
  role: 'assistant',
  content: '',
} satisfies Omit<MessageNode, 'id'>;

const GREETING: ThreadGraph = {
  threadId: 'thread_t',
  rootNodeId: 'msg_u',
  activeHeadMessageId: 'msg_a',
  version: 2,
  nodes: {
    msg_u: { ...NODE, id: 'msg_u', role: 'user', content: 'Hi', childrenIds: ['msg_a'] },
    msg_a: { ...NODE, id: 'msg_a', parentId: 'msg_u', content: 'Hello', reasoning: 'A "greeting".' },
  },
};

describe('the text bytes the thread limit counts', () => {
  it('are the UTF-8 bytes of the text as JSON writes it, escapes included', () => {
    for (const text of [
      'plain',
      '🚀 é',
      '"\\',
      '\n\t\r\b\f',
      '\u0001\u001f',
      '\ud800',
      'a\udc00b',
      '\ud83d\ude80\ud83d',
    ]) {
      expect(jsonTextBytes(text), JSON.stringify(text)).toBe(asJson(text));
    }
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => jsonTextBytes(text) === asJson(text)));
  });

  it("count every node's reasoning beside its text: a sync carries both", () => {
    expect(threadSize(structuredClone(GREETING))).toEqual({ nodes: 2, bytes: 2 + 5 + asJson('A "greeting".') });
  });

  it('walk the nodes once, then read only the text that a change or a stream brings', () => {
    const nodes: Record<string, MessageNode> = {};
    for (let index = 0; index < 1000; index += 1) {
      const id = `msg_${index}`;
      nodes[id] = { ...NODE, id, content: `answer ${index} "quoted"`, reasoning: `why ${index}` };
    }
    nodes.msg_live = { ...NODE, id: 'msg_live', status: 'streaming', content: 'Once' };
    const graph: ThreadGraph = { threadId: 'thread_t', rootNodeId: null, activeHeadMessageId: null, version: 1, nodes };
    const reads = vi.spyOn(Buffer, 'byteLength');
    onTestFinished(() => reads.mockRestore());
    /** The count, and how many texts it read. */
    const count = () => {
      reads.mockClear();
      const size = threadSize(graph);
      return { size, reads: reads.mock.calls.length };
    };

    expect(count()).toEqual({ size: { nodes: 1001, bytes: recount(graph) }, reads: 2002 });
    // The streaming answer's text grows between changes: only it is read again.
    nodes.msg_live!.content += ' upon a time, \u0001';
    expect(count()).toEqual({ size: { nodes: 1001, bytes: recount(graph) }, reads: 2 });

    // A change cuts the answer and ends it, shortens another node, removes one and adds one.
    reads.mockClear();
    applyCountedChange(graph, {
      threadId: 'thread_t',
      baseVersion: 1,
      version: 2,
      rootNodeId: null,
      activeHeadMessageId: null,
      nodes: [
        { ...nodes.msg_live!, status: 'interrupted', content: 'Once upon' },
        { ...nodes.msg_8!, content: 'ans' },
        { ...NODE, id: 'msg_new', content: 'new' },
      ],
      removedNodeIds: ['msg_9'],
    });
    // The texts of the shortened node and the removed one, before; of the three nodes the change carries, after.
    expect(reads).toHaveBeenCalledTimes(2 * 2 + 3 * 2);
    expect(count()).toEqual({ size: { nodes: 1001, bytes: recount(graph) }, reads: 0 });
  });

  it('walk the nodes again after a change the count did not follow, or a reload', () => {
    const graph = structuredClone(GREETING);
    expect(threadSize(graph)).toEqual({ nodes: 2, bytes: recount(graph) });
    applyChange(graph, { ...header(graph), nodes: [{ ...graph.nodes.msg_a!, content: 'Hello there' }] });
    expect(threadSize(graph)).toEqual({ nodes: 2, bytes: recount(graph) });
    graph.nodes = { msg_u: { ...graph.nodes.msg_u!, content: 'Hi again' } };
    expect(threadSize(graph)).toEqual({ nodes: 1, bytes: recount(graph) });
  });

  it('stay exact through any sequence of changes and streamed text', () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        id: fc.integer({ min: 0, max: 7 }),
        text: fc.string(),
        streaming: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('replace' as const),
        id: fc.integer({ min: 0, max: 7 }),
        text: fc.string(),
        streaming: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ kind: fc.constant('stream' as const), text: fc.string({ unit: 'binary' }) }),
      fc.record({ kind: fc.constant('unfollowed' as const), id: fc.integer({ min: 0, max: 7 }), text: fc.string() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const graph: ThreadGraph = {
          threadId: 'thread_t',
          rootNodeId: null,
          activeHeadMessageId: null,
          version: 0,
          nodes: {},
        };
        for (const action of steps) {
          if (action.kind === 'stream') {
            const streaming = Object.values(graph.nodes).find((node) => node.status === 'streaming');
            if (streaming) streaming.content += action.text;
          } else if (action.kind === 'remove') {
            if (graph.nodes[`msg_${action.id}`])
              applyCountedChange(graph, { ...header(graph), nodes: [], removedNodeIds: [`msg_${action.id}`] });
          } else {
            const id = `msg_${action.id}`;
            const exists = graph.nodes[id] !== undefined;
            if (action.kind === 'add' && exists) continue;
            if (action.kind !== 'add' && !exists) continue;
            const status = 'streaming' in action && action.streaming ? 'streaming' : 'completed';
            const node: MessageNode = { ...NODE, id, status, content: action.text, reasoning: `${action.text}\n` };
            (action.kind === 'unfollowed' ? applyChange : applyCountedChange)(graph, {
              ...header(graph),
              nodes: [node],
            });
          }
          expect(threadSize(graph)).toEqual({ nodes: Object.keys(graph.nodes).length, bytes: recount(graph) });
        }
      }),
    );
  });
});
