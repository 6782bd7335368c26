import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

export interface DemoProviderOptions {
  /** Pause before each word, in milliseconds. Default 40 (about 25 words a second, a typical chat model pace). */
  delayMs?: number;
  /** Words in each answer. Default 120. */
  words?: number;
}

const VOCABULARY = (
  'a conversation is a tree and every pivot is a new branch that keeps the words already said the head pointer ' +
  'marks where the next prompt grows from while an answer streams you can change direction at once and the ' +
  'server halts the model trims the partial answer to what you saw and starts again under your new prompt ' +
  'anchoring an older message moves the head back so that the next question branches from there'
).split(' ');

/**
 * A deterministic stand-in for a language model, used when no model is configured: it streams readable text at a
 * steady pace, and the same conversation always gets the same answer, which makes pivots easy to test and demo.
 */
export class DemoProvider implements ModelProvider {
  readonly provider = 'demo';
  readonly model = 'cpp-demo';
  private readonly delayMs: number;
  private readonly words: number;

  constructor(options: DemoProviderOptions = {}) {
    this.delayMs = options.delayMs ?? 40;
    this.words = options.words ?? 120;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const prompt = request.messages.at(-1)?.content ?? '';
    const words = composeAnswer(prompt, request.messages.length, this.words);
    for (const [index, word] of words.entries()) {
      if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal: request.signal });
      request.signal.throwIfAborted();
      yield { type: 'text-delta', text: index === 0 ? word : ` ${word}` };
    }
    yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: countWords(request.messages.map((m) => m.content).join(' ')), outputTokens: words.length } };
  }
}

function composeAnswer(prompt: string, turn: number, length: number): string[] {
  const quoted = prompt.replace(/\s+/g, ' ').trim().slice(0, 60);
  const opening = `(demo model, turn ${turn}) You said: "${quoted}".`.split(' ');
  let seed = hash(prompt) + turn;
  const body: string[] = [];
  while (opening.length + body.length < length) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    body.push(VOCABULARY[seed % VOCABULARY.length]!);
  }
  return [...opening, ...body].slice(0, Math.max(length, 1));
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index += 1) value = Math.imul(value ^ text.charCodeAt(index), 16777619) >>> 0;
  return value;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
