import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

export interface DemoProviderOptions {
  /** Pause before each word, in milliseconds. Default 40 (about 25 words a second, a typical chat model pace). */
  delayMs?: number;
  /** Words in each answer. Default 120. */
  words?: number;
}

const SENTENCES = [
  'A conversation here is a tree, not a line.',
  'Every pivot starts a new branch and keeps the words already said.',
  'The head marks where the next prompt grows from.',
  'While an answer streams, you can change direction at once.',
  'The server halts the model, trims the partial answer to what you saw, and starts again under your new prompt.',
  'Anchoring an older message moves the head back, so the next question branches from there.',
  'Every client holds an exact copy of the tree, on connect and after every change.',
  'The model only sees the branch it answers: the path from the root to your prompt.',
  'This is the demo model: configure a real one to get real answers.',
];

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
  const words = `(demo model, turn ${turn}) You said: "${quoted}".`.split(' ');
  // The same conversation always gets the same answer; different prompts start at different sentences.
  let sentence = hash(prompt) + turn;
  while (words.length < length) words.push(...SENTENCES[sentence++ % SENTENCES.length]!.split(' '));
  return words.slice(0, Math.max(length, 1));
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index += 1) value = Math.imul(value ^ text.charCodeAt(index), 16777619) >>> 0;
  return value;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
