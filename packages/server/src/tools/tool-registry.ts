import { safeCutLength, storableText, type ToolApproval } from '@promethea/cpp-protocol';
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
  /** A call that waits for approval longer than this many milliseconds ends in `output-error`, unrun. */
  approvalTimeoutMs: number;
}

export const DEFAULT_TOOL_LIMITS: ToolLimits = {
  maxSteps: 8,
  timeoutMs: 60_000,
  maxOutputLength: 256 * 1024,
  approvalTimeoutMs: 10 * 60_000,
};

/** How a call ended: its output, or why there is none (told to the model as the call's result). */
export type ToolOutcome =
  | { state: 'output-available'; output: string }
  | { state: 'output-error'; errorText: string }
  | { state: 'output-denied'; approval: ToolApproval };

/** Tool names every vendor accepts (OpenAI's and Anthropic's rules). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface RegisteredTool {
  tool: ServerTool;
  definition: ModelTool;
  validate: z.ZodType;
}

/**
 * The server's tools: the application's, checked once when the server is made (each name, each input schema as a
 * validator and as the JSON Schema the model is given), and those of sources that come and go (an MCP server's, as
 * it lists them). `run` answers one call from its name and its input text, whatever they are: an unknown tool, input
 * that is not JSON or fails its schema, a tool that throws or outlives its timeout, each ends in `output-error` with
 * a sentence the model can act on. An answer's step offers the tools there are when it starts.
 */
export class ToolRegistry {
  private readonly own = new Map<string, RegisteredTool>();
  private readonly sources = new Map<string, Map<string, RegisteredTool>>();
  private tools = new Map<string, RegisteredTool>();
  private listed: readonly ModelTool[] = [];

  constructor(
    tools: ServerTools = {},
    readonly limits: ToolLimits = DEFAULT_TOOL_LIMITS,
  ) {
    for (const [name, tool] of Object.entries(tools)) {
      if (!TOOL_NAME.test(name)) throw new TypeError(`tool name "${name}": expected 1-64 of [A-Za-z0-9_-]`);
      this.own.set(name, register(name, tool));
    }
    this.relist();
  }

  get definitions(): readonly ModelTool[] {
    return this.listed;
  }

  get size(): number {
    return this.tools.size;
  }

  /**
   * The tools `source` offers now, in place of those it offered before (none: it offers none). A name the
   * application's tools or another source already use keeps its first owner; the names left out are returned.
   */
  offer(source: string, tools: ServerTools): string[] {
    const taken = new Set([
      ...this.own.keys(),
      ...[...this.sources].flatMap(([other, own]) => (other === source ? [] : [...own.keys()])),
    ]);
    const offered = new Map<string, RegisteredTool>();
    const left: string[] = [];
    for (const [name, tool] of Object.entries(tools)) {
      if (!TOOL_NAME.test(name) || taken.has(name)) left.push(name);
      else offered.set(name, register(name, tool));
    }
    this.sources.set(source, offered);
    this.relist();
    return left;
  }

  private relist(): void {
    this.tools = new Map([...this.own, ...[...this.sources.values()].flatMap((tools) => [...tools])]);
    this.listed = [...this.tools.values()].map(({ definition }) => definition);
  }

  /** Whether the tool runs on a client: it has no `execute` of its own. */
  runsOnClient(toolName: string): boolean {
    const tool = this.tools.get(toolName)?.tool;
    return tool !== undefined && tool.execute === undefined;
  }

  /** A client's answer to a call of a tool that runs on the client, checked as a server tool's would be. */
  clientOutcome(result: { output?: string; errorText?: string }): ToolOutcome {
    if (result.output === undefined) return failed(storableText(result.errorText ?? ''));
    return { state: 'output-available', output: this.outputText(result.output) };
  }

  /**
   * Whether a call must wait for a person's approval before it runs: its tool says so, always or for this input. A
   * call of an unknown tool or with an invalid input does not wait (it fails at once); a tool's function that
   * throws asks for approval, the safe side.
   */
  async needsApproval(toolName: string, inputText: string): Promise<boolean> {
    const needsApproval = this.tools.get(toolName)?.tool.needsApproval;
    if (typeof needsApproval !== 'function') return needsApproval === true;
    const input = parseInput(toolName, inputText, this.tools.get(toolName)!.validate);
    if (!('value' in input)) return false;
    try {
      return (await needsApproval(input.value)) === true;
    } catch {
      return true;
    }
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
        if (!registered.tool.execute) throw new Error(`The tool ${toolName} runs on a client, not on the server.`);
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
  const validate = isZodSchema(inputSchema) ? inputSchema : validatorOf(inputSchema);
  const jsonSchema = isZodSchema(inputSchema)
    ? (z.toJSONSchema(inputSchema, { io: 'input', unrepresentable: 'any' }) as JsonObjectSchema)
    : inputSchema;
  // The `$schema` keyword tells a validator which draft; vendors' tool schemas are bare objects.
  const { $schema: _draft, ...parameters } = jsonSchema;
  return { tool, validate, definition: { name, ...(description ? { description } : {}), inputSchema: parameters } };
}

/**
 * A JSON Schema's validator. A schema zod cannot read (a keyword it does not know) checks only that the input is an
 * object: the tool's own side (an MCP server) checks the rest.
 */
function validatorOf(schema: JsonObjectSchema): z.ZodType {
  try {
    return z.fromJSONSchema(schema as never);
  } catch {
    return z.record(z.string(), z.unknown());
  }
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
