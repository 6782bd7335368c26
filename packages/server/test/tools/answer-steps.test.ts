import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelProvider, ModelRequest, ModelStreamPart } from '../../src/model/model-provider.js';
import { type AnswerPart, answerSteps } from '../../src/tools/answer-steps.js';
import type { ServerTools } from '../../src/tools/server-tool.js';
import { DEFAULT_TOOL_LIMITS, ToolRegistry } from '../../src/tools/tool-registry.js';

/** A model whose n-th call streams `steps[n]`, recording every request. */
function scriptedModel(...steps: ModelStreamPart[][]): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    provider: 'scripted',
    model: 'scripted',
    requests,
    async *stream(request) {
      requests.push(structuredClone({ ...request, signal: undefined }) as unknown as ModelRequest);
      yield* steps[requests.length - 1] ?? [];
    },
  };
}

const call = (id: string, toolName: string, input: string): ModelStreamPart[] => [
  { type: 'tool-input-start', toolCallId: id, toolName },
  { type: 'tool-input-delta', toolCallId: id, delta: input },
  { type: 'tool-call', toolCallId: id, toolName, input },
];
const finish = (outputTokens: number): ModelStreamPart => ({
  type: 'finish',
  finishReason: 'other',
  usage: { inputTokens: 10, outputTokens },
});

/** No call of these tests waits for approval, nor for a client. */
const NO_APPROVALS = { wait: () => new Promise<never>(() => undefined) };

const TOOLS: ServerTools = {
  add: { inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b },
  shout: { inputSchema: z.object({ text: z.string() }), execute: ({ text }) => text.toUpperCase() },
};

/** The text the parts streamed so far, as the answer keeps it. */
const textOf = (parts: AnswerPart[]): string =>
  parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');

/** Runs the steps and returns the parts they streamed; `observe` sees each part as it comes. */
async function run(
  model: ModelProvider,
  tools = new ToolRegistry(TOOLS),
  signal = new AbortController().signal,
  observe: (part: AnswerPart) => void = () => undefined,
) {
  const parts: AnswerPart[] = [];
  await answerSteps(
    {
      provider: model,
      messages: [{ role: 'user', content: 'Add 1 and 2, and shout hi' }],
      continues: false,
      signal,
      tools,
      approvals: NO_APPROVALS,
      clientResults: NO_APPROVALS,
      firstStep: 0,
      threadId: 'thread_T',
      identity: 'anonymous',
      text: () => textOf(parts),
    },
    (part) => {
      parts.push(part);
      observe(part);
    },
  );
  return parts;
}

describe('answerSteps', () => {
  it('runs a step’s parallel calls, gives their results back to the model, and ends at a step without calls', async () => {
    const model = scriptedModel(
      [
        { type: 'text-delta', text: 'Working.' },
        ...call('p1', 'add', '{"a":1,"b":2}'),
        ...call('p2', 'shout', '{"text":"hi"}'),
        finish(5),
      ],
      [
        { type: 'text-delta', text: ' 3 and HI.' },
        { type: 'finish', finishReason: 'stop', usage: { outputTokens: 4 } },
      ],
    );
    const parts = await run(model);
    const starts = parts.filter((part) => part.type === 'tool-call-start');
    expect(starts.map((part) => [part.toolName, part.step])).toEqual([
      ['add', 0],
      ['shout', 0],
    ]);
    const [add, shout] = starts.map((part) => part.toolCallId);
    expect(add).toMatch(/^call_[0-9A-HJKMNP-TV-Z]{26}$/);
    const updates = parts.filter((part) => part.type === 'tool-call-update');
    expect(updates).toEqual(
      expect.arrayContaining([
        { type: 'tool-call-update', toolCallId: add, update: { state: 'input-available', input: '{"a":1,"b":2}' } },
        { type: 'tool-call-update', toolCallId: add, update: { state: 'output-available', output: '3' } },
        { type: 'tool-call-update', toolCallId: shout, update: { state: 'output-available', output: 'HI' } },
      ]),
    );
    expect(parts.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 9 } });
    // Both calls came before the next step's text, which follows the results.
    const nextText = parts.findIndex((part) => part.type === 'text-delta' && part.text === ' 3 and HI.');
    const lastUpdate = parts.length - 1 - [...parts].reverse().findIndex((part) => part.type === 'tool-call-update');
    expect(lastUpdate).toBeLessThan(nextText);
    expect(model.requests[0]?.tools?.map((tool) => tool.name)).toEqual(['add', 'shout']);
    expect(model.requests[1]?.messages).toEqual([
      { role: 'user', content: 'Add 1 and 2, and shout hi' },
      {
        role: 'assistant',
        content: 'Working.',
        toolCalls: [
          { toolCallId: add, toolName: 'add', input: '{"a":1,"b":2}' },
          { toolCallId: shout, toolName: 'shout', input: '{"text":"hi"}' },
        ],
      },
      { role: 'tool', toolCallId: add, toolName: 'add', content: '3' },
      { role: 'tool', toolCallId: shout, toolName: 'shout', content: 'HI' },
    ]);
  });

  it('tells the model of an unknown tool and of invalid input, as errors, and goes on', async () => {
    const model = scriptedModel(
      [...call('p1', 'divide', '{}'), ...call('p2', 'add', '{"a":"one"}'), finish(5)],
      [{ type: 'text-delta', text: 'Sorry.' }, finish(1)],
    );
    await run(model);
    const results = model.requests[1]?.messages.filter((message) => message.role === 'tool');
    expect(results).toEqual([
      expect.objectContaining({ toolName: 'divide', isError: true, content: expect.stringMatching(/^Unknown tool/) }),
      expect.objectContaining({ toolName: 'add', isError: true, content: expect.stringMatching(/invalid/) }),
    ]);
  });

  it('stops at the step limit: the last step’s calls are not run, and say why', async () => {
    const calls: string[] = [];
    const tools = new ToolRegistry(
      { add: { inputSchema: z.object({}), execute: () => calls.push('ran') } },
      { ...DEFAULT_TOOL_LIMITS, maxSteps: 2 },
    );
    const model = scriptedModel([...call('p1', 'add', '{}'), finish(1)], [...call('p2', 'add', '{}'), finish(1)]);
    const parts = await run(model, tools);
    expect(model.requests).toHaveLength(2);
    expect(calls).toEqual(['ran']);
    expect(parts.filter((part) => part.type === 'tool-call-update').at(-1)).toMatchObject({
      update: { state: 'output-error', errorText: expect.stringMatching(/^Not run: .* limit of 2 model calls/) },
    });
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('reports a running tool’s progress, and ends at once when the answer is halted while it runs', async () => {
    const halt = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const tools = new ToolRegistry({
      count_to: {
        inputSchema: z.object({ to: z.number() }),
        execute: (_input, { signal, reportProgress }) => {
          toolSignal = signal;
          reportProgress({ progress: 1, total: 3, message: 'one' });
          return new Promise(() => undefined);
        },
      },
    });
    const model = scriptedModel([...call('p1', 'count_to', '{"to":3}'), finish(1)]);
    const parts = await run(model, tools, halt.signal, (part) => {
      if (part.type === 'tool-call-update' && part.update.progress) halt.abort();
    });
    expect(parts.at(-1)).toMatchObject({
      type: 'tool-call-update',
      update: { state: 'input-available', progress: { progress: 1, total: 3, message: 'one' } },
    });
    expect(toolSignal?.aborted).toBe(true);
    expect(model.requests).toHaveLength(1);
  });
});
