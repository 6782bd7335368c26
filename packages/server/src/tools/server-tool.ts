import type { ToolProgress } from '@promethea/cpp-protocol';
import type { z } from 'zod';

/** What a tool's `execute` is told about the call it answers. */
export interface ToolContext {
  /** Aborted when the answer is halted (pivot, stop, regenerate, shutdown) or the call times out: stop at once. */
  signal: AbortSignal;
  threadId: string;
  /** The identity whose frame started the answer. */
  identity: string;
  toolCallId: string;
  /** Tells the thread's clients how far the tool has got; they show it while the call runs. */
  reportProgress(progress: ToolProgress): void;
}

/** A JSON Schema of an object, as a model is given it. */
export type JsonObjectSchema = Record<string, unknown>;

/**
 * A tool the server runs for the model (`new CPPServer({ tools: { name: tool } })`). Its input is checked against
 * `inputSchema` (zod, or a JSON Schema) before `execute` sees it; a call that fails the check is answered with the
 * reason, for the model to try again. `execute` returns the output: a string as it is, anything else as its JSON.
 */
export interface ServerTool<Input = unknown> {
  description?: string;
  inputSchema: z.ZodType<Input> | JsonObjectSchema;
  /**
   * Whether a call waits for a person's approval before it runs (docs/PROTOCOL.md §26.9): always, or when this
   * function of the checked input says so. Default: never.
   */
  needsApproval?: boolean | ((input: Input) => boolean | Promise<boolean>);
  /**
   * Runs the call on the server. Without it the tool runs on a client (docs/PROTOCOL.md §26.10): a client that has
   * a handler for it (CPPClient's `tools`) answers each call with CPP_TOOL_RESULT.
   */
  execute?(input: Input, context: ToolContext): unknown;
}

/** Tools by name. A name is what the model calls: 1–64 of `[A-Za-z0-9_-]`, as every vendor accepts. */
// biome-ignore lint/suspicious/noExplicitAny: each tool has its own input type; the map holds them all.
export type ServerTools = Record<string, ServerTool<any>>;
