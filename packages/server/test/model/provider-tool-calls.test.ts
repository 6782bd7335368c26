import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelMessage, ModelProvider, ModelStreamPart, ModelTool } from '../../src/model/model-provider.js';
import { AiSdkProvider } from '../../src/model/providers/ai-sdk-provider.js';
import { createModelProvider } from '../../src/model/provider-factory.js';
import { API_KEY, drain } from './provider-contract.js';
import { fixture, ndjson, type ReplayServer, sse, startReplayServer } from './replay-server.js';

const TOOLS: ModelTool[] = [
  {
    name: 'get_weather',
    description: 'The weather in a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  { name: 'clock', inputSchema: { type: 'object', properties: {} } },
];

/** A branch whose last answer called both tools in one step, their results after it, then the next prompt. */
const AFTER_TOOLS: ModelMessage[] = [
  { role: 'user', content: 'Weather in Paris, and the time?' },
  {
    role: 'assistant',
    content: 'Let me look.',
    toolCalls: [
      { toolCallId: 'call_A', toolName: 'get_weather', input: '{"city":"Paris"}' },
      { toolCallId: 'call_B', toolName: 'clock', input: '{}' },
    ],
  },
  { role: 'tool', toolCallId: 'call_A', toolName: 'get_weather', content: 'Sunny, 21 °C' },
  { role: 'tool', toolCallId: 'call_B', toolName: 'clock', content: 'The tool call was stopped.', isError: true },
  { role: 'user', content: 'Thanks' },
];

const toolParts = (parts: ModelStreamPart[]) => parts.filter((part) => part.type.startsWith('tool-'));

/** What every vendor's stream of the two parallel calls comes out as: started, streamed, then whole, in order. */
function expectParallelCalls(parts: ModelStreamPart[], ids: [string, string]): void {
  const calls = parts.filter((part) => part.type === 'tool-call');
  expect(calls).toEqual([
    { type: 'tool-call', toolCallId: ids[0], toolName: 'get_weather', input: expect.any(String) },
    { type: 'tool-call', toolCallId: ids[1], toolName: 'clock', input: '{}' },
  ]);
  expect(JSON.parse((calls[0] as { input: string }).input)).toEqual({ city: 'Paris' });
  for (const id of ids) {
    const own = toolParts(parts).filter((part) => 'toolCallId' in part && part.toolCallId === id);
    expect(own[0]?.type).toBe('tool-input-start');
    expect(own.at(-1)?.type).toBe('tool-call');
    const streamed = own.map((part) => (part.type === 'tool-input-delta' ? part.delta : '')).join('');
    expect(streamed === '' || JSON.parse(streamed)).toBeTruthy();
  }
  const text = parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');
  expect(text).toBe('Let me look.');
  expect(parts.at(-1)?.type).toBe('finish');
}

const request = (provider: ModelProvider, messages: ModelMessage[]) =>
  provider.stream({ messages, tools: TOOLS, signal: new AbortController().signal });

describe('tool calls on each vendor’s wire', () => {
  let server: ReplayServer;
  afterEach(() => server?.close());

  it('openai-compatible: streams parallel delta.tool_calls pieces by index, and sends tools, calls and results', async () => {
    server = await startReplayServer(sse(fixture('openai-tool-calls.sse')));
    const provider = createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'gpt-4o-mini' });
    const { parts } = await drain(request(provider, AFTER_TOOLS));
    expectParallelCalls(parts, ['call_weather1', 'call_clock2']);
    // The pieces of the first call, as they came, interleaved with the second call's start.
    expect(toolParts(parts).slice(0, 4)).toEqual([
      { type: 'tool-input-start', toolCallId: 'call_weather1', toolName: 'get_weather' },
      { type: 'tool-input-delta', toolCallId: 'call_weather1', delta: '{"city": ' },
      { type: 'tool-input-start', toolCallId: 'call_clock2', toolName: 'clock' },
      { type: 'tool-input-delta', toolCallId: 'call_weather1', delta: '"Paris"}' },
    ]);
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'The weather in a city', parameters: TOOLS[0]?.inputSchema },
        },
        { type: 'function', function: { name: 'clock', parameters: TOOLS[1]?.inputSchema } },
      ],
      messages: [
        { role: 'user', content: 'Weather in Paris, and the time?' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_B', type: 'function', function: { name: 'clock', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_A', content: 'Sunny, 21 °C' },
        { role: 'tool', tool_call_id: 'call_B', content: 'The tool call was stopped.' },
        { role: 'user', content: 'Thanks' },
      ],
    });
  });

  it('openai-compatible: sends no tools field when the model has none', async () => {
    server = await startReplayServer(sse(fixture('openai-chat-stream.sse')));
    const provider = createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'gpt-4o-mini' });
    await drain(provider.stream({ messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal }));
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });

  it('anthropic: streams tool_use blocks by input_json_delta, and sends tool_use and tool_result blocks', async () => {
    server = await startReplayServer(sse(fixture('anthropic-tool-use.sse')));
    const provider = createModelProvider({ provider: 'anthropic', baseUrl: server.url, apiKey: API_KEY });
    const { parts } = await drain(request(provider, AFTER_TOOLS));
    expectParallelCalls(parts, ['toolu_01Weather', 'toolu_02Clock']);
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        { name: 'get_weather', description: 'The weather in a city', input_schema: TOOLS[0]?.inputSchema },
        { name: 'clock', input_schema: TOOLS[1]?.inputSchema },
      ],
      messages: [
        { role: 'user', content: 'Weather in Paris, and the time?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'call_A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_B', name: 'clock', input: {} },
          ],
        },
        {
          // Both results and the next prompt are one user turn, results first.
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_A', content: 'Sunny, 21 °C' },
            { type: 'tool_result', tool_use_id: 'call_B', content: 'The tool call was stopped.', is_error: true },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
    });
  });

  it('ollama: takes whole calls from message.tool_calls, and sends arguments as objects and results by tool name', async () => {
    server = await startReplayServer(ndjson(fixture('ollama-tool-calls.ndjson')));
    const provider = createModelProvider({ provider: 'ollama', baseUrl: server.url, model: 'llama3.2' });
    const { parts } = await drain(request(provider, AFTER_TOOLS));
    expectParallelCalls(parts, ['call_0', 'call_1']);
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: TOOLS[0]?.inputSchema } },
        { type: 'function', function: { name: 'clock', parameters: TOOLS[1]?.inputSchema } },
      ],
      messages: [
        { role: 'user', content: 'Weather in Paris, and the time?' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
            { function: { name: 'clock', arguments: {} } },
          ],
        },
        { role: 'tool', tool_name: 'get_weather', content: 'Sunny, 21 °C' },
        { role: 'tool', tool_name: 'clock', content: 'The tool call was stopped.' },
        { role: 'user', content: 'Thanks' },
      ],
    });
  });

  it('the AI SDK provider: streams tool-input parts and whole tool-call parts, and gives tools without execute', async () => {
    type StreamPart =
      Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part> ? Part : never;
    const usage = {
      inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 21, text: 21, reasoning: undefined },
    };
    const stream: StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Let me look.' },
      { type: 'text-end', id: 't1' },
      { type: 'tool-input-start', id: 'tc_1', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'tc_1', delta: '{"city": ' },
      { type: 'tool-input-delta', id: 'tc_1', delta: '"Paris"}' },
      { type: 'tool-input-end', id: 'tc_1' },
      { type: 'tool-call', toolCallId: 'tc_1', toolName: 'get_weather', input: '{"city": "Paris"}' },
      // A provider that does not stream a call's input sends it whole.
      { type: 'tool-call', toolCallId: 'tc_2', toolName: 'clock', input: '{}' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
    ];
    const model = new MockLanguageModelV3({
      provider: 'mock.chat',
      modelId: 'mock-1',
      doStream: async () => ({ stream: convertArrayToReadableStream(stream) }),
    });
    const { parts } = await drain(request(new AiSdkProvider({ model }), AFTER_TOOLS));
    expectParallelCalls(parts, ['tc_1', 'tc_2']);
    const call = model.doStreamCalls[0];
    expect(call?.tools?.map((tool) => tool.type === 'function' && [tool.name, tool.inputSchema])).toEqual([
      ['get_weather', TOOLS[0]?.inputSchema],
      ['clock', TOOLS[1]?.inputSchema],
    ]);
    expect(call?.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris, and the time?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool-call', toolCallId: 'call_A', toolName: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool-call', toolCallId: 'call_B', toolName: 'clock', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_A',
            toolName: 'get_weather',
            output: { type: 'text', value: 'Sunny, 21 °C' },
          },
          {
            type: 'tool-result',
            toolCallId: 'call_B',
            toolName: 'clock',
            output: { type: 'error-text', value: 'The tool call was stopped.' },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ]);
  });
});
