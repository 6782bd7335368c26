import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyChange,
  findInvariantViolations,
  pathToRoot,
  planAnchor,
  planFinish,
  planPivotSplice,
  planPrompt,
  type ErrorCode,
  type ExchangeInput,
} from '@promethea/cpp-protocol';
import { expectCPPError } from '../support/expect-cpp-error.js';
import { SimulatedThread } from '../support/simulated-thread.js';
import { endsInsidePair } from '../support/surrogates.js';

const prompt = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 10 });
// Full Unicode code points, so that chunks and cuts meet surrogate pairs.
const delta = fc.string({ unit: 'binary', minLength: 1, maxLength: 6 });
const received = fc.option(fc.nat({ max: 40 }), { nil: undefined });
const invalidKinds = [
  'prompt-unknown-parent',
  'prompt-reused-id',
  'pivot-unknown-node',
  'pivot-reused-id',
  'anchor-unknown',
  'finish-not-streaming',
  'stale-change',
] as const;

// Weighted so that streams grow over several chunks before they are pivoted, stopped or finished.
const step = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('prompt' as const),
      // null: a first prompt beside the others, the edit of the thread's first prompt.
      parent: fc.option(fc.oneof({ weight: 4, arbitrary: fc.nat() }, fc.constant(null)), { nil: undefined }),
      text: prompt,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('pivot' as const),
      target: fc.oneof(fc.constant('streaming' as const), fc.nat()),
      text: prompt,
      received,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('anchor' as const), target: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('stop' as const), received }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('chunk' as const), delta, resend: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('complete' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('invalid' as const),
      which: fc.constantFrom(...invalidKinds),
      target: fc.nat(),
    }),
  },
);
type Step = typeof step extends fc.Arbitrary<infer Value> ? Value : never;

function exchangeFor(thread: SimulatedThread, text: string): ExchangeInput {
  return {
    userNodeId: thread.freshId(),
    assistantNodeId: thread.freshId(),
    userPrompt: text,
    createdAt: 1,
    model: 'simulated',
  };
}

/** Applies one step as the server would; steps the server refuses (THREAD_BUSY, NOT_STREAMING) do nothing. */
function run(thread: SimulatedThread, action: Step): void {
  const streaming = thread.streamingNode();
  switch (action.kind) {
    case 'prompt': {
      if (streaming) return;
      const input = exchangeFor(thread, action.text);
      const parentNodeId =
        action.parent === undefined || action.parent === null ? action.parent : thread.pick(action.parent);
      const expectedParent = parentNodeId === undefined ? thread.graph.activeHeadMessageId : parentNodeId;
      thread.commit(planPrompt(thread.graph, { ...input, parentNodeId }));
      expect(thread.node(input.userNodeId).parentId).toBe(expectedParent);
      expect(thread.graph.activeHeadMessageId).toBe(input.assistantNodeId);
      return;
    }
    case 'pivot': {
      const targetId = action.target === 'streaming' ? (streaming?.id ?? thread.pick(0)) : thread.pick(action.target);
      if (targetId === undefined) return;
      const targetStreams = streaming?.id === targetId;
      if (streaming && !targetStreams) return;
      const streamedText = thread.node(targetId).content;
      const input = exchangeFor(thread, action.text);
      const cutContent = targetStreams ? thread.halt('pivot', action.received) : undefined;
      thread.commit(planPivotSplice(thread.graph, { ...input, interruptedNodeId: targetId, cutContent }));
      const target = thread.node(targetId);
      expect(target.childrenIds.at(-1)).toBe(input.userNodeId);
      expect(thread.graph.activeHeadMessageId).toBe(input.assistantNodeId);
      if (targetStreams) {
        expect(target.status).toBe('interrupted');
        expect(streamedText.startsWith(target.content)).toBe(true);
        expect(endsInsidePair(streamedText, target.content.length)).toBe(false);
        if (action.received !== undefined) expect(target.content.length).toBeLessThanOrEqual(action.received);
      } else {
        expect(target.content).toBe(streamedText);
      }
      return;
    }
    case 'anchor': {
      const targetId = thread.pick(action.target);
      if (targetId === undefined) return;
      thread.commit(planAnchor(thread.graph, targetId));
      expect(thread.graph.activeHeadMessageId).toBe(targetId);
      if (streaming) expect(thread.node(streaming.id).status).toBe('streaming');
      return;
    }
    case 'stop': {
      if (!streaming) return;
      const head = thread.graph.activeHeadMessageId;
      const content = thread.halt('stop', action.received);
      thread.commit(planFinish(thread.graph, { nodeId: streaming.id, status: 'interrupted', content }));
      expect(thread.graph.activeHeadMessageId).toBe(head);
      return;
    }
    case 'chunk':
      if (!streaming) return;
      thread.stream(action.delta);
      if (action.resend) thread.resendLastChunk();
      return;
    case 'complete':
      if (!streaming) return;
      thread.completed();
      thread.commit(
        planFinish(thread.graph, {
          nodeId: streaming.id,
          status: 'completed',
          content: streaming.content,
          usage: { outputTokens: streaming.content.length },
        }),
      );
      return;
    case 'fail':
      if (!streaming) return;
      thread.endStream();
      thread.commit(planFinish(thread.graph, { nodeId: streaming.id, status: 'failed', content: streaming.content }));
      return;
    case 'invalid':
      runInvalid(thread, action.which, action.target);
  }
}

/** Plans that must be refused; the graph must come out exactly as it went in. */
function runInvalid(thread: SimulatedThread, which: (typeof invalidKinds)[number], index: number): void {
  const existing = thread.pick(index);
  const refuse = (action: () => unknown, code?: ErrorCode) => {
    const before = structuredClone(thread.graph);
    if (code) expectCPPError(action, code);
    else expect(action).toThrow();
    expect(thread.graph).toEqual(before);
  };
  const input = exchangeFor(thread, 'refused');
  switch (which) {
    case 'prompt-unknown-parent':
      return refuse(() => planPrompt(thread.graph, { ...input, parentNodeId: 'msg_unknown' }), 'NOT_FOUND');
    case 'pivot-unknown-node':
      return refuse(
        () => planPivotSplice(thread.graph, { ...input, interruptedNodeId: 'msg_unknown', cutContent: '' }),
        'NOT_FOUND',
      );
    case 'anchor-unknown':
      return refuse(() => planAnchor(thread.graph, 'msg_unknown'), 'NOT_FOUND');
  }
  if (existing === undefined) return;
  switch (which) {
    case 'prompt-reused-id':
      return refuse(() => planPrompt(thread.graph, { ...input, userNodeId: existing }), 'CONFLICT');
    case 'pivot-reused-id':
      return refuse(
        () => planPivotSplice(thread.graph, { ...input, interruptedNodeId: existing, assistantNodeId: existing }),
        'CONFLICT',
      );
    case 'finish-not-streaming':
      if (thread.node(existing).status === 'streaming') return;
      return refuse(() => planFinish(thread.graph, { nodeId: existing, status: 'completed', content: '' }));
    case 'stale-change':
      return refuse(() =>
        applyChange(thread.graph, { ...planAnchor(thread.graph, existing), baseVersion: thread.graph.version - 1 }),
      );
  }
}

function expectSound(thread: SimulatedThread): void {
  const { graph } = thread;
  expect(findInvariantViolations(graph)).toEqual([]);
  expect(graph.version).toBe(thread.commits);
  const streaming = Object.values(graph.nodes).filter((node) => node.status === 'streaming');
  expect(streaming.length).toBeLessThanOrEqual(1);
  for (const node of streaming) expect(node).toMatchObject({ role: 'assistant', childrenIds: [] });
  if (graph.activeHeadMessageId !== null) {
    const path = pathToRoot(graph, graph.activeHeadMessageId);
    expect(path[0]?.id).toBe(graph.rootNodeId);
    expect(path.at(-1)?.id).toBe(graph.activeHeadMessageId);
  }
  expect(thread.mirror).toEqual(graph);
}

describe('tree operations under random sessions', () => {
  it('keep every invariant, refuse invalid steps without a trace, and keep a patched mirror equal to the source', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60, size: 'max' }), (steps) => {
        const thread = new SimulatedThread();
        for (const action of steps) {
          run(thread, action);
          expectSound(thread);
        }
      }),
      { numRuns: 100 },
    );
  });
});
