import type { MessageNode, ServerFrame } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { ThreadCopies } from '../src/thread-copies.js';

const threadId = 'thread_t';
const user: MessageNode = {
  id: 'msg_u',
  parentId: null,
  childrenIds: ['msg_a'],
  role: 'user',
  content: 'Hi',
  status: 'completed',
  createdAt: 1,
};
const answer: MessageNode = {
  id: 'msg_a',
  parentId: 'msg_u',
  childrenIds: [],
  role: 'assistant',
  content: '',
  status: 'streaming',
  createdAt: 1,
};

const frames = {
  emptySync: {
    type: 'CPP_SYNC_GRAPH',
    timestamp: 1,
    payload: { threadId, rootNodeId: null, activeHeadMessageId: null, nodes: {}, version: 0, title: '' },
  },
  prompt: {
    type: 'CPP_GRAPH_PATCH',
    timestamp: 1,
    payload: {
      threadId,
      version: 1,
      rootNodeId: 'msg_u',
      activeHeadMessageId: 'msg_a',
      nodes: { msg_u: user, msg_a: answer },
    },
  },
  chunk: (offset: number, delta: string) => ({
    type: 'CPP_STREAM_CHUNK',
    timestamp: 1,
    payload: { threadId, nodeId: 'msg_a', offset, delta },
  }),
  reasoning: (offset: number, delta: string) => ({
    type: 'CPP_STREAM_CHUNK',
    timestamp: 1,
    payload: { threadId, nodeId: 'msg_a', offset, delta, part: 'reasoning' as const },
  }),
  haltedInReasoning: (finalReasoningLength: number) => ({
    type: 'CPP_STREAM_HALTED',
    timestamp: 1,
    payload: {
      interruptedNodeId: 'msg_a',
      finalContentLength: 0,
      finalReasoningLength,
      part: 'reasoning' as const,
      lastChunkReceived: '',
      threadId,
      reason: 'pivot',
    },
  }),
  streamingAgain: (version: number, content: string) => ({
    type: 'CPP_GRAPH_PATCH',
    timestamp: 1,
    payload: {
      threadId,
      version,
      rootNodeId: 'msg_u',
      activeHeadMessageId: 'msg_a',
      nodes: { msg_a: { ...answer, content } },
    },
  }),
  halted: (finalContentLength: number) => ({
    type: 'CPP_STREAM_HALTED',
    timestamp: 1,
    payload: { interruptedNodeId: 'msg_a', finalContentLength, lastChunkReceived: '', threadId, reason: 'stop' },
  }),
  completed: (finalContentLength: number) => ({
    type: 'CPP_STREAM_COMPLETED',
    timestamp: 1,
    payload: { threadId, nodeId: 'msg_a', finalContentLength, finishReason: 'stop' },
  }),
} satisfies Record<string, ServerFrame | ((...values: never[]) => ServerFrame)>;

/** The violations of the last frame, after the ones before it applied cleanly. */
function lastViolations(sequence: ServerFrame[]): string[] {
  const copies = new ThreadCopies();
  const before = sequence.slice(0, -1).flatMap((frame) => copies.observe(frame));
  expect(before).toEqual([]);
  return copies.observe(sequence.at(-1)!);
}

describe('ThreadCopies', () => {
  it('follows a stream: the text of each node as the chunks built it, and where each chunk started', () => {
    const copies = new ThreadCopies();
    for (const frame of [
      frames.emptySync,
      frames.prompt,
      frames.chunk(0, 'Hello '),
      frames.chunk(6, 'world'),
      frames.completed(11),
    ])
      expect(copies.observe(frame)).toEqual([]);
    expect(copies.streamed('msg_a')).toEqual({ text: 'Hello world', chunkStarts: [0, 6] });
  });

  it('trims the text to a halt', () => {
    const copies = new ThreadCopies();
    for (const frame of [frames.emptySync, frames.prompt, frames.chunk(0, 'Hello world'), frames.halted(4)])
      copies.observe(frame);
    expect(copies.streamed('msg_a')?.text).toBe('Hell');
  });

  it('reports each broken rule', () => {
    const streaming = [frames.emptySync, frames.prompt, frames.chunk(0, 'Hello')];
    expect(lastViolations([...streaming, frames.chunk(7, 'x')])).toEqual([
      'CPP_STREAM_CHUNK offset 7 of node msg_a, whose text was 5 code units long',
    ]);
    expect(lastViolations([...streaming, frames.halted(3), frames.chunk(3, 'x')])).toEqual([
      'CPP_STREAM_CHUNK of node msg_a after its end',
    ]);
    expect(lastViolations([...streaming, frames.halted(9)])).toEqual([
      'CPP_STREAM_HALTED finalContentLength 9 of node msg_a, which was sent 5 code units',
    ]);
    expect(lastViolations([...streaming, frames.completed(4)])).toEqual([
      'CPP_STREAM_COMPLETED finalContentLength 4 of node msg_a, which was sent 5 code units',
    ]);
    expect(lastViolations([frames.emptySync, frames.chunk(0, 'x')])).toEqual([
      'CPP_STREAM_CHUNK of node msg_a before the structural update that creates it',
    ]);
    expect(lastViolations([frames.prompt])).toEqual([
      `CPP_GRAPH_PATCH of thread ${threadId}, of which this connection was sent no CPP_SYNC_GRAPH first`,
    ]);
    expect(
      lastViolations([frames.emptySync, { ...frames.prompt, payload: { ...frames.prompt.payload, version: 2 } }]),
    ).toEqual(['CPP_GRAPH_PATCH version 2 does not follow version 0']);
    expect(lastViolations([frames.emptySync, frames.prompt, frames.emptySync])).toEqual([
      'CPP_SYNC_GRAPH went back from version 1 to 0',
    ]);
  });

  it('reports a tree an update leaves unsound', () => {
    const orphan = {
      ...frames.prompt,
      payload: { ...frames.prompt.payload, nodes: { msg_u: { ...user, childrenIds: [] }, msg_a: answer } },
    };
    expect(lastViolations([frames.emptySync, orphan])).toContain(
      `after CPP_GRAPH_PATCH of thread ${threadId} version 1: 1 nodes are not reachable from a first prompt (cycle or orphan)`,
    );
    const twoStreams = {
      ...frames.prompt,
      payload: { ...frames.prompt.payload, nodes: { msg_u: { ...user, status: 'streaming' as const }, msg_a: answer } },
    };
    expect(lastViolations([frames.emptySync, twoStreams])).toContain(
      `after CPP_GRAPH_PATCH of thread ${threadId} version 1: nodes of different prompts stream at once: msg_u, msg_a`,
    );
  });

  it('follows reasoning chunks in the reasoning, with offsets of their own, and trims it to a halt', () => {
    const copies = new ThreadCopies();
    const sequence = [
      frames.emptySync,
      frames.prompt,
      frames.reasoning(0, 'Let me '),
      frames.chunk(0, 'Hi'),
      frames.reasoning(7, 'think'),
      frames.haltedInReasoning(5),
    ];
    for (const frame of sequence) expect(copies.observe(frame)).toEqual([]);
    expect(copies.streamed('msg_a', 'reasoning')).toEqual({ text: 'Let m', chunkStarts: [0, 7] });
    expect(copies.streamed('msg_a')).toEqual({ text: '', chunkStarts: [0] });
    expect(
      lastViolations([frames.emptySync, frames.prompt, frames.reasoning(0, 'Hm'), frames.reasoning(3, 'x')]),
    ).toEqual(['CPP_STREAM_CHUNK offset 3 of node msg_a, whose reasoning was 2 code units long']);
    expect(
      lastViolations([frames.emptySync, frames.prompt, frames.reasoning(0, 'Hm'), frames.haltedInReasoning(3)]),
    ).toEqual(['CPP_STREAM_HALTED finalReasoningLength 3 of node msg_a, which was sent 2 code units of reasoning']);
  });

  it('takes a node set streaming again (a continue) as no longer ended, its chunks continuing its text and counted afresh', () => {
    const copies = new ThreadCopies();
    const stopped = {
      ...frames.prompt,
      payload: {
        ...frames.prompt.payload,
        version: 2,
        nodes: { msg_a: { ...answer, status: 'interrupted' as const, content: 'Hell' } },
      },
    };
    const sequence = [
      frames.emptySync,
      frames.prompt,
      frames.chunk(0, 'Hello world'),
      frames.halted(4),
      stopped,
      frames.streamingAgain(3, 'Hell'),
      frames.chunk(4, 'o!'),
    ];
    for (const frame of sequence) expect(copies.observe(frame)).toEqual([]);
    expect(copies.streamed('msg_a')).toEqual({ text: 'Hello!', chunkStarts: [4] });
    expect(lastViolations([...sequence.slice(0, 6), frames.chunk(0, 'x')])).toEqual([
      'CPP_STREAM_CHUNK offset 0 of node msg_a, whose text was 4 code units long',
    ]);
  });

  it('checks that chunks continue each other on a thread it holds no copy of (implicit subscription)', () => {
    expect(lastViolations([frames.chunk(40, 'abc'), frames.chunk(43, 'd')])).toEqual([]);
    expect(lastViolations([frames.chunk(40, 'abc'), frames.chunk(45, 'd')])).toEqual([
      'CPP_STREAM_CHUNK offset 45 of node msg_a, whose previous chunk ended at 43',
    ]);
  });
});
