import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelMessage, ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

/** The demo's agent: what `demoModels()` offers beside `cpp-demo`, and what a models file may name. */
export const DEMO_TOOLS_MODEL = 'demo-tools';

/** How far `count_to` counts when the demo's agent calls it. */
export const DEMO_COUNT_TO = 5;

/**
 * A deterministic agent for the demo (no API key): each answer calls the server's `clock` tool, then its slow
 * `count_to` tool (pivot while it counts), then says what they returned, its text streamed word by word between the
 * calls. A prompt that mentions a note is kept with `save_note` instead, which waits for the person's approval. It
 * reads where it is from the tool results after the prompt. Without those tools it says so and stops.
 */
export class DemoToolsProvider implements ModelProvider {
  readonly provider = 'demo';
  readonly model = DEMO_TOOLS_MODEL;
  readonly reasoning = false;
  private readonly delayMs: number;

  constructor(options: { delayMs?: number | undefined } = {}) {
    this.delayMs = options.delayMs ?? 40;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const tools = new Set(request.tools?.map((tool) => tool.name));
    const results = resultsAfterPrompt(request.messages);
    const clock = results.find((result) => result.toolName === 'clock');
    const count = results.find((result) => result.toolName === 'count_to');
    const prompt = lastPrompt(request.messages);
    if (request.continues) {
      yield* this.words(' (The demo agent goes on.)', request.signal);
    } else if (/\btime zone\b/i.test(prompt) && tools.has('time_zone')) {
      const zone = results.find((result) => result.toolName === 'time_zone');
      if (zone) yield* this.words(` ${describe('Your time zone is', zone)}`, request.signal);
      else {
        yield* this.words('Your browser knows your time zone: I ask it.', request.signal);
        yield* this.call('time_zone', '{}', 0, request.signal);
      }
    } else if (/\bnote\b/i.test(prompt) && tools.has('save_note')) {
      const saved = results.find((result) => result.toolName === 'save_note');
      const kept = saved?.isError ? ' You did not approve it, so I kept nothing.' : ` ${saved?.content}`;
      if (saved) yield* this.words(kept, request.signal);
      else {
        yield* this.words('I will keep that as a note, if you approve.', request.signal);
        yield* this.call('save_note', JSON.stringify({ text: prompt.slice(0, 1000) }), 0, request.signal);
      }
    } else if (!tools.has('clock') || !tools.has('count_to')) {
      yield* this.words(
        'The demo agent needs the server tools clock and count_to, and this server has not got them.',
        request.signal,
      );
    } else if (!clock) {
      yield* this.words('First I look at the clock.', request.signal);
      yield* this.call('clock', '{}', results.length, request.signal);
    } else if (!count) {
      const lead = `${describe('The clock says', clock)} Now I count to ${DEMO_COUNT_TO}, slowly: pivot while I count.`;
      yield* this.words(` ${lead}`, request.signal);
      yield* this.call('count_to', `{"to":${DEMO_COUNT_TO}}`, results.length, request.signal);
    } else {
      yield* this.words(` ${describe('I counted', count)} That was an answer that called two tools.`, request.signal);
    }
    yield { type: 'finish', finishReason: 'stop' };
  }

  private async *words(text: string, signal: AbortSignal): AsyncGenerator<ModelStreamPart> {
    for (const word of text.match(/ *[^ ]+/g) ?? []) {
      if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal });
      yield { type: 'text-delta', text: word };
    }
  }

  /** A call whose input streams in two pieces, as a real model's does. */
  private async *call(
    toolName: string,
    input: string,
    index: number,
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    const toolCallId = `demo_${index}`;
    yield { type: 'tool-input-start', toolCallId, toolName };
    const half = Math.ceil(input.length / 2);
    for (const delta of [input.slice(0, half), input.slice(half)]) {
      if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal });
      if (delta) yield { type: 'tool-input-delta', toolCallId, delta };
    }
    yield { type: 'tool-call', toolCallId, toolName, input };
  }
}

function lastPrompt(messages: readonly ModelMessage[]): string {
  for (const message of [...messages].reverse()) if (message.role === 'user') return message.content;
  return '';
}

function resultsAfterPrompt(messages: readonly ModelMessage[]): Array<Extract<ModelMessage, { role: 'tool' }>> {
  const results: Array<Extract<ModelMessage, { role: 'tool' }>> = [];
  for (const message of [...messages].reverse()) {
    if (message.role === 'user') break;
    if (message.role === 'tool') results.unshift(message);
  }
  return results;
}

function describe(lead: string, result: Extract<ModelMessage, { role: 'tool' }>): string {
  return result.isError
    ? `The tool ${result.toolName} gave no answer (${result.content}).`
    : `${lead} ${result.content}.`;
}
