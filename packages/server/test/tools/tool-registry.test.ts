import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ToolContext } from '../../src/tools/server-tool.js';
import { DEFAULT_TOOL_LIMITS, ToolRegistry } from '../../src/tools/tool-registry.js';

function context(signal = new AbortController().signal): ToolContext {
  return { signal, threadId: 'thread_T', identity: 'anonymous', toolCallId: 'call_C', reportProgress: () => undefined };
}

const weather = {
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string().min(1) }),
  execute: ({ city }: { city: string }) => ({ city, sky: 'sunny' }),
};

describe('ToolRegistry', () => {
  afterEach(() => vi.useRealTimers());

  it('gives the model each tool as a JSON Schema, from zod or as written', () => {
    const jsonSchema = { type: 'object', properties: { to: { type: 'integer', minimum: 1 } }, required: ['to'] };
    const registry = new ToolRegistry({ weather, count_to: { inputSchema: jsonSchema, execute: () => 'done' } });
    expect(registry.definitions).toEqual([
      {
        name: 'weather',
        description: 'The weather in a city',
        inputSchema: {
          type: 'object',
          properties: { city: { type: 'string', minLength: 1 } },
          required: ['city'],
        },
      },
      { name: 'count_to', inputSchema: jsonSchema },
    ]);
  });

  it('refuses a tool name that a vendor would refuse', () => {
    expect(() => new ToolRegistry({ 'get weather': weather })).toThrow('tool name "get weather"');
  });

  it('runs a tool with its checked input; a string output as it is, anything else as JSON', async () => {
    const execute = vi.fn((input: { city: string }, _context: ToolContext) => weather.execute(input));
    const registry = new ToolRegistry({
      weather: { ...weather, execute },
      echo: { inputSchema: {}, execute: () => 'hi' },
    });
    expect(await registry.run('weather', '{"city":"Paris"}', context())).toEqual({
      state: 'output-available',
      output: '{"city":"Paris","sky":"sunny"}',
    });
    expect(execute.mock.calls[0]?.[1]).toMatchObject({
      threadId: 'thread_T',
      identity: 'anonymous',
      toolCallId: 'call_C',
    });
    expect(await registry.run('echo', '{}', context())).toEqual({ state: 'output-available', output: 'hi' });
  });

  it('answers an unknown tool, input that is not JSON, and input that fails its schema (zod or JSON Schema) without running it', async () => {
    const execute = vi.fn(() => 'ran');
    const registry = new ToolRegistry({
      weather: { ...weather, execute },
      count_to: {
        inputSchema: { type: 'object', properties: { to: { type: 'integer', minimum: 1 } }, required: ['to'] },
        execute,
      },
    });
    expect(await registry.run('forecast', '{}', context())).toEqual({
      state: 'output-error',
      errorText: 'Unknown tool "forecast". The tools are: weather, count_to.',
    });
    expect(await registry.run('weather', '{"city":', context())).toMatchObject({
      state: 'output-error',
      errorText: expect.stringMatching(/^The input of weather is not JSON: /),
    });
    expect(await registry.run('weather', '{"city":""}', context())).toMatchObject({
      errorText: expect.stringMatching(/^The input of weather is invalid: .*city/s),
    });
    expect(await registry.run('count_to', '{"to":0}', context())).toMatchObject({
      errorText: expect.stringMatching(/^The input of count_to is invalid: .*to/s),
    });
    expect(execute).not.toHaveBeenCalled();
  });

  it('answers a tool that throws with its message', async () => {
    const registry = new ToolRegistry({
      broken: {
        inputSchema: z.object({}),
        execute: () => {
          throw new Error('disk full');
        },
      },
    });
    expect(await registry.run('broken', '{}', context())).toEqual({ state: 'output-error', errorText: 'disk full' });
  });

  it('stops a call that outlives its timeout: its signal aborts, and the call ends in an error', async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const registry = new ToolRegistry(
      {
        slow: {
          inputSchema: z.object({}),
          execute: (_input, { signal }) => {
            seen = signal;
            return new Promise(() => undefined);
          },
        },
      },
      { ...DEFAULT_TOOL_LIMITS, timeoutMs: 5_000 },
    );
    const outcome = registry.run('slow', '{}', context());
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await outcome).toEqual({
      state: 'output-error',
      errorText: 'The tool slow did not finish within 5000 ms, and was stopped.',
    });
    expect(seen?.aborted).toBe(true);
  });

  it('ends a call at once, without an outcome, when the answer is halted, and aborts the tool’s signal', async () => {
    const halt = new AbortController();
    let seen: AbortSignal | undefined;
    const registry = new ToolRegistry({
      slow: {
        inputSchema: z.object({}),
        execute: (_input, { signal }) => {
          seen = signal;
          return new Promise(() => undefined);
        },
      },
    });
    const outcome = registry.run('slow', '{}', context(halt.signal));
    halt.abort();
    expect(await outcome).toBeUndefined();
    expect(seen?.aborted).toBe(true);
  });

  it('cuts output longer than the limit, off a surrogate pair, with a marker', async () => {
    const registry = new ToolRegistry(
      { big: { inputSchema: z.object({}), execute: () => `abc🚀${'x'.repeat(10)}` } },
      { ...DEFAULT_TOOL_LIMITS, maxOutputLength: 4 },
    );
    expect(await registry.run('big', '{}', context())).toEqual({
      state: 'output-available',
      output: 'abc\n[output cut: 3 of 15 characters kept]',
    });
  });
});
