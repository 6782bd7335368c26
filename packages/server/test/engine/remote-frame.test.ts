import {
  applyChange,
  emptyGraph,
  encodeServerFrame,
  ErrorCode,
  planFinish,
  planPrompt,
  type ServerFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { applyRemoteFrame } from '../../src/engine/remote-frame.js';

function streamingGraph(content: string): ThreadGraph {
  const graph = emptyGraph('thread_remote');
  applyChange(
    graph,
    planPrompt(graph, { userNodeId: 'msg_user', userPrompt: 'Hi', assistantNodeId: 'msg_answer', createdAt: 1 }),
  );
  graph.nodes.msg_answer!.content = content;
  return graph;
}

function chunk(offset: number, delta: string): { frame: ServerFrame; text: string } {
  const payload = { threadId: 'thread_remote', nodeId: 'msg_answer', offset, delta };
  return {
    frame: { type: 'CPP_STREAM_CHUNK', timestamp: 1, payload },
    text: encodeServerFrame('CPP_STREAM_CHUNK', payload),
  };
}

function patchOf(
  graph: ThreadGraph,
  change = planFinish(graph, { nodeId: 'msg_answer', status: 'completed', content: 'Hello' }),
) {
  const payload = {
    threadId: graph.threadId,
    version: change.version,
    rootNodeId: change.rootNodeId,
    activeHeadMessageId: change.activeHeadMessageId,
    nodes: Object.fromEntries(change.nodes.map((node) => [node.id, node])),
  };
  return {
    frame: { type: 'CPP_GRAPH_PATCH', timestamp: 1, payload } as ServerFrame,
    text: encodeServerFrame('CPP_GRAPH_PATCH', payload),
  };
}

describe("a frame from another instance applied to this instance's copy of the thread", () => {
  it('drops a chunk of a node the copy holds as ended, and keeps its text (PROTOCOL.md §15.4)', () => {
    const graph = streamingGraph('Hel');
    graph.nodes.msg_answer!.status = 'interrupted';
    const { frame, text } = chunk(3, 'lo');

    expect(applyRemoteFrame(graph, frame, text)).toEqual({ kind: 'known' });
    expect(graph.nodes.msg_answer!.content).toBe('Hel');
  });

  it('appends a chunk that starts where the copy ends and passes it on unchanged', () => {
    const graph = streamingGraph('Hel');
    const { frame, text } = chunk(3, 'lo');

    expect(applyRemoteFrame(graph, frame, text)).toEqual({
      kind: 'frame',
      text,
      chunk: { threadId: 'thread_remote', nodeId: 'msg_answer', offset: 3, delta: 'lo' },
    });
    expect(graph.nodes.msg_answer!.content).toBe('Hello');
  });

  it('passes on only the unseen part of a chunk the copy partly holds (it was loaded with the text so far)', () => {
    const graph = streamingGraph('Hell');
    const { frame, text } = chunk(3, 'lo!');

    const outcome = applyRemoteFrame(graph, frame, text);

    const trimmed = { threadId: 'thread_remote', nodeId: 'msg_answer', offset: 4, delta: 'o!' };
    expect(outcome).toEqual({ kind: 'frame', text: expect.stringContaining('"delta":"o!"'), chunk: trimmed });
    expect(graph.nodes.msg_answer!.content).toBe('Hello!');
  });

  it('drops a chunk it holds already, and reports a gap for one beyond its text', () => {
    const graph = streamingGraph('Hello');

    expect(applyRemoteFrame(graph, chunk(0, 'Hel').frame, chunk(0, 'Hel').text)).toEqual({ kind: 'known' });
    expect(applyRemoteFrame(graph, chunk(7, 'x').frame, chunk(7, 'x').text)).toEqual({ kind: 'gap' });
    expect(graph.nodes.msg_answer!.content).toBe('Hello');
  });

  it('applies the patch of the next version as a change, drops older ones, and reports a gap for later ones', () => {
    const graph = streamingGraph('Hello');
    const next = patchOf(graph);
    const later = structuredClone(next);
    (later.frame.payload as { version: number }).version = graph.version + 2;

    expect(applyRemoteFrame(graph, later.frame, later.text)).toEqual({ kind: 'gap' });
    const outcome = applyRemoteFrame(graph, next.frame, next.text);
    expect(outcome).toMatchObject({ kind: 'change', change: { baseVersion: 1, version: 2 } });
    expect(graph.nodes.msg_answer).toMatchObject({ status: 'completed', content: 'Hello' });
    expect(applyRemoteFrame(graph, next.frame, next.text)).toEqual({ kind: 'known' });
  });

  it('trims the node at a halt, reports a gap when the copy holds less than the cut, and drops the halt of a node ended here', () => {
    const halted = (finalContentLength: number) => {
      const payload = {
        interruptedNodeId: 'msg_answer',
        finalContentLength,
        lastChunkReceived: 'l',
        threadId: 'thread_remote',
        reason: 'pivot' as const,
      };
      return {
        frame: { type: 'CPP_STREAM_HALTED', timestamp: 1, payload } as ServerFrame,
        text: encodeServerFrame('CPP_STREAM_HALTED', payload),
      };
    };
    const graph = streamingGraph('Hello');
    // Made once each: the frame's text carries the time it was encoded.
    const [beyond, cut] = [halted(9), halted(3)];

    expect(applyRemoteFrame(graph, beyond.frame, beyond.text)).toEqual({ kind: 'gap' });
    expect(applyRemoteFrame(graph, cut.frame, cut.text)).toEqual({ kind: 'frame', text: cut.text });
    expect(graph.nodes.msg_answer!.content).toBe('Hel');

    // The copy was reloaded meanwhile with the node ended (its subscribers got that in a sync): the halt is old news.
    applyChange(graph, planFinish(graph, { nodeId: 'msg_answer', status: 'interrupted', content: 'Hel' }));
    expect(applyRemoteFrame(graph, cut.frame, cut.text)).toEqual({ kind: 'known' });
  });

  it("drops a completion or a provider's failure of a node the copy has ended already, and passes on one of a streaming node", () => {
    const graph = streamingGraph('Hello');
    const payload = {
      threadId: 'thread_remote',
      nodeId: 'msg_answer',
      finalContentLength: 5,
      finishReason: 'stop' as const,
    };
    const completed = {
      frame: { type: 'CPP_STREAM_COMPLETED', timestamp: 1, payload } as ServerFrame,
      text: encodeServerFrame('CPP_STREAM_COMPLETED', payload),
    };
    const failure = {
      code: ErrorCode.PROVIDER_ERROR,
      message: 'the model failed',
      threadId: 'thread_remote',
      nodeId: 'msg_answer',
    };
    const failed = {
      frame: { type: 'CPP_ERROR', timestamp: 1, payload: failure } as ServerFrame,
      text: encodeServerFrame('CPP_ERROR', failure),
    };

    expect(applyRemoteFrame(graph, completed.frame, completed.text)).toEqual({ kind: 'frame', text: completed.text });
    expect(applyRemoteFrame(graph, failed.frame, failed.text)).toEqual({ kind: 'frame', text: failed.text });
    // Reloaded with the node ended: its subscribers had that in a sync.
    applyChange(graph, planFinish(graph, { nodeId: 'msg_answer', status: 'completed', content: 'Hello' }));
    expect(applyRemoteFrame(graph, completed.frame, completed.text)).toEqual({ kind: 'known' });
    expect(applyRemoteFrame(graph, failed.frame, failed.text)).toEqual({ kind: 'known' });
  });
});
