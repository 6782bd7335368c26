import { describe, expect, it } from 'vitest';
import {
  applyChunk,
  applyHalted,
  applyToolCall,
  cutToolCalls,
  graphFromSync,
  type ThreadGraph,
  type ToolCall,
} from '@promethea/cpp-protocol';
import { serverSamples } from '../support/sample-frames.js';

const STREAMING = 'msg_01h8v1';
const THREAD_ID = serverSamples.CPP_SYNC_GRAPH.payload.threadId;

const call = (
  toolCallId: string,
  offset: number,
  state: ToolCall['state'],
  extra: Partial<ToolCall> = {},
): ToolCall => ({
  toolCallId,
  toolName: 'count_to',
  step: 0,
  offset,
  state,
  input: '{"to":3}',
  ...extra,
});

function mirror(): ThreadGraph {
  const graph = graphFromSync(serverSamples.CPP_SYNC_GRAPH.payload);
  graph.nodes[STREAMING]!.content = 'Let me count.';
  return graph;
}

describe('cutToolCalls', () => {
  it('keeps the calls made within the kept text, interrupts those still going on, drops those made after it', () => {
    const calls = [
      call('call_done', 0, 'output-available', { output: '3' }),
      call('call_running', 5, 'input-available', { progress: { progress: 1, total: 3 } }),
      call('call_streaming', 5, 'input-streaming', { input: '{"to"' }),
      call('call_later', 6, 'input-available'),
    ];
    expect(cutToolCalls(calls, 5)).toEqual([
      calls[0],
      call('call_running', 5, 'interrupted'),
      call('call_streaming', 5, 'interrupted', { input: '{"to"' }),
    ]);
  });
});

describe('a tool call in a client mirror', () => {
  it('is added by CPP_TOOL_CALL, streamed by tool-input chunks, then replaced by its next state', () => {
    const graph = mirror();
    const started = call('call_a', 13, 'input-streaming', { input: '' });
    expect(applyToolCall(graph, { threadId: THREAD_ID, nodeId: STREAMING, toolCall: started })).toBe('applied');
    const chunk = (offset: number, delta: string) =>
      applyChunk(graph, {
        threadId: THREAD_ID,
        nodeId: STREAMING,
        offset,
        delta,
        part: 'tool-input',
        toolCallId: 'call_a',
      });
    expect(chunk(0, '{"to"')).toBe('applied');
    expect(chunk(0, '{"to"')).toBe('stale');
    expect(chunk(9, '3}')).toBe('gap');
    expect(chunk(5, ':3}')).toBe('applied');
    expect(graph.nodes[STREAMING]?.toolCalls).toEqual([{ ...started, input: '{"to":3}' }]);
    // The content is untouched by the call's input.
    expect(graph.nodes[STREAMING]?.content).toBe('Let me count.');
    const done = call('call_a', 13, 'output-available', { output: '1 2 3' });
    applyToolCall(graph, { threadId: THREAD_ID, nodeId: STREAMING, toolCall: done });
    expect(graph.nodes[STREAMING]?.toolCalls).toEqual([done]);
  });

  it('reports a gap for a chunk of a call it does not hold, or a call of a node it does not hold', () => {
    const graph = mirror();
    const payload = { threadId: THREAD_ID, nodeId: STREAMING, offset: 0, delta: '{', part: 'tool-input' as const };
    expect(applyChunk(graph, { ...payload, toolCallId: 'call_unknown' })).toBe('gap');
    const toolCall = call('call_a', 0, 'input-available');
    expect(applyToolCall(graph, { threadId: THREAD_ID, nodeId: 'msg_unknown', toolCall })).toBe('gap');
  });

  it('is cut with its node by CPP_STREAM_HALTED, as the server cuts it', () => {
    const graph = mirror();
    for (const toolCall of [call('call_a', 13, 'input-available'), call('call_b', 20, 'input-streaming')]) {
      applyToolCall(graph, { threadId: THREAD_ID, nodeId: STREAMING, toolCall });
    }
    graph.nodes[STREAMING]!.content = 'Let me count. Then more';
    const halted = {
      interruptedNodeId: STREAMING,
      lastChunkReceived: '',
      threadId: THREAD_ID,
      reason: 'pivot' as const,
    };
    expect(applyHalted(graph, { ...halted, finalContentLength: 13 })).toBe('applied');
    expect(graph.nodes[STREAMING]?.toolCalls).toEqual([call('call_a', 13, 'interrupted')]);
    expect(applyHalted(graph, { ...halted, finalContentLength: 5 })).toBe('applied');
    expect(graph.nodes[STREAMING]).not.toHaveProperty('toolCalls');
  });
});
