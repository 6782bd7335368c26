import type { ModelToolCall, ToolCallStreamPart } from '../model-provider.js';

/**
 * The tool calls of one step while a vendor streams them, keyed the vendor's way (OpenAI: the call's index; Anthropic:
 * its content block's index; the AI SDK: its id). Whatever the vendor sends, every call comes out the same:
 * `tool-input-start`, its input's pieces, then `tool-call` with the whole input (`{}` for a call with no arguments).
 */
export class ToolCallParts {
  private readonly open = new Map<string | number, ModelToolCall>();

  has(key: string | number): boolean {
    return this.open.has(key);
  }

  *start(key: string | number, toolCallId: string, toolName: string): Generator<ToolCallStreamPart> {
    this.open.set(key, { toolCallId, toolName, input: '' });
    yield { type: 'tool-input-start', toolCallId, toolName };
  }

  *delta(key: string | number, delta: string | null | undefined): Generator<ToolCallStreamPart> {
    const call = this.open.get(key);
    if (!call || !delta) return;
    call.input += delta;
    yield { type: 'tool-input-delta', toolCallId: call.toolCallId, delta };
  }

  /** The call's input is complete: the pieces streamed, or `input` when the vendor gives it whole at the end. */
  *end(key: string | number, input?: string): Generator<ToolCallStreamPart> {
    const call = this.open.get(key);
    if (!call) return;
    this.open.delete(key);
    const whole = input ?? call.input;
    yield { type: 'tool-call', toolCallId: call.toolCallId, toolName: call.toolName, input: whole || '{}' };
  }

  /** Ends every call still open, in the order they started: a vendor that completes calls only with the step. */
  *endAll(): Generator<ToolCallStreamPart> {
    for (const key of [...this.open.keys()]) yield* this.end(key);
  }

  /** A call the vendor sends whole, in one piece. */
  *whole(toolCallId: string, toolName: string, input: string): Generator<ToolCallStreamPart> {
    yield* this.start(toolCallId, toolCallId, toolName);
    yield* this.delta(toolCallId, input);
    yield* this.end(toolCallId, input);
  }
}
