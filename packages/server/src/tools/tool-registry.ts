import { safeCutLength, storableText } from '@promethea/cpp-protocol';
import { z } from 'zod';
import type { ModelTool } from '../model/model-provider.js';
import type { JsonObjectSchema, ServerTool, ServerTools, ToolContext } from './server-tool.js';

/** The limits on an answer's tool calls (docs/PROTOCOL.md §26.6). */
export interface ToolLimits {
  /** Model calls per answer: the last one allowed gets no tools run after it. */
  maxSteps: number;
  /** A call still running after this many milliseconds is aborted and ends in `output-error`. */
  timeoutMs: number;
  /** Output longer than this many UTF-16 code units is cut, with a marker saying so. */
  maxOutputLength: number;
}

export const DEFAULT_TOOL_LIMITS: ToolLimits = { maxSteps: 8, timeoutMs: 60_000, maxOutputLength: 256 * 1024 };

/** How a call ended: its output, or why there is none (told to the model as the call's result). */
export type ToolOutcome = { state: 'output-available'; output: string } | { state: 'output-error'; errorText: string };

/** Tool names every vendor accepts (OpenAI's and Anthropic's rules). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface RegisteredTool {
  tool: ServerTool;
  definition: ModelTool;
  validate: z.ZodType;
}

/**
 * The server's tools, checked once when the server is made: each name, each input schema as a validator and as the
 * JSON Schema the model is given. `run` answers one call from its name and its input text, whatever they are: an
 * unknown tool, input that is not JSON or fails its schema, a tool that throws or outlives its timeout, each ends in
 * `output-error` with a sentence the model can act on.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();
  readonly definitions: readonly ModelTool[];

  constructor(
    tools: ServerTools = {},
    readonly limits: ToolLimits = DEFAULT_TOOL_LIMITS,
  ) {
    for (const [name, tool] of Object.entries(tools)) {
      if (!TOOL_NAME.test(name)) throw new TypeError(`tool name "${name}": expected 1-64 of [A-Za-z0-9_-]`);
      this.tools.set(name, register(name, tool));
    }
    this.definitions = [...this.tools.values()].map(({ definition }) => definition);
  }

  get size(): number {
    return this.tools.size;
  }

  /**
   * Runs one call to its end. `undefined` when `context.signal` aborted first (the answer was halted): the caller
   * keeps the call as interrupted, and whatever the tool still does is not waited for.
   */
  async run(toolName: string, inputText: string, context: ToolContext): Promise<ToolOutcome | undefined> {
    const registered = this.tools.get(toolName);
    if (!registered) {
      const known = [...this.tools.keys()].join(', ') || 'none';
      return failed(`Unknown tool "${toolName}". The tools are: ${known}.`);
    }
    const input = parseInput(toolName, inputText, registered.validate);
    if (!('value' in input)) return input;
    const timeout = new AbortController();
    const signal = AbortSignal.any([context.signal, timeout.signal]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ToolOutcome>((resolve) => {
      timer = setTimeout(() => {
        timeout.abort(new Error('timed out'));
        resolve(failed(`The tool ${toolName} did not finish within ${this.limits.timeoutMs} ms, and was stopped.`));
      }, this.limits.timeoutMs);
    });
    let onHalt = (): void => undefined;
    const halted = new Promise<undefined>((resolve) => {
      onHalt = () => resolve(undefined);
      if (context.signal.aborted) onHalt();
      else context.signal.addEventListener('abort', onHalt, { once: true });
    });
    const executed = (async (): Promise<ToolOutcome> => {
      try {
        const output = await registered.tool.execute(input.value, { ...context, signal });
        return { state: 'output-available', output: this.outputText(output) };
      } catch (error) {
        return failed(error instanceof Error ? error.message : String(error));
      }
    })();
    try {
      return await Promise.race([executed, timedOut, halted]);
    } finally {
      clearTimeout(timer);
      context.signal.removeEventListener('abort', onHalt);
    }
  }

  /** A tool's output as text: a string as it is, anything else as its JSON; cut when longer than the limit. */
  private outputText(output: unknown): string {
    const text = storableText(typeof output === 'string' ? output : (JSON.stringify(output) ?? ''));
    const { maxOutputLength } = this.limits;
    if (text.length <= maxOutputLength) return text;
    const kept = safeCutLength(text, maxOutputLength);
    return `${text.slice(0, kept)}\n[output cut: ${kept} of ${text.length} characters kept]`;
  }
}

function failed(errorText: string): ToolOutcome {
  return { state: 'output-error', errorText };
}

function register(name: string, tool: ServerTool): RegisteredTool {
  const { inputSchema, description } = tool;
  const validate = isZodSchema(inputSchema) ? inputSchema : z.fromJSONSchema(inputSchema as never);
  const jsonSchema = isZodSchema(inputSchema)
    ? (z.toJSONSchema(inputSchema, { io: 'input', unrepresentable: 'any' }) as JsonObjectSchema)
    : inputSchema;
  // The `$schema` keyword tells a validator which draft; vendors' tool schemas are bare objects.
  const { $schema: _draft, ...parameters } = jsonSchema;
  return { tool, validate, definition: { name, ...(description ? { description } : {}), inputSchema: parameters } };
}

function isZodSchema(schema: ServerTool['inputSchema']): schema is z.ZodType {
  return typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

function parseInput(toolName: string, inputText: string, schema: z.ZodType): { value: unknown } | ToolOutcome {
  let value: unknown;
  try {
    value = JSON.parse(inputText);
  } catch (error) {
    return failed(`The input of ${toolName} is not JSON: ${(error as Error).message}`);
  }
  const checked = schema.safeParse(value);
  if (!checked.success) return failed(`The input of ${toolName} is invalid: ${z.prettifyError(checked.error)}`);
  return { value: checked.data };
}
