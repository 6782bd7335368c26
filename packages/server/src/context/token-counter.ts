import type { ModelMessage } from '../model/model-provider.js';
import { estimateAttachmentTokens, estimateTokens, MESSAGE_OVERHEAD_TOKENS } from './token-estimate.js';

/** Counts the tokens of text as one model family does. */
export interface TokenCounter {
  /** What counts, for logs and tests: `estimate`, or the tokenizer's encoding. */
  readonly name: string;
  /** True once counts are the model's own; until then they are estimates. A count kept from before is counted again. */
  readonly exact: boolean;
  count(text: string): number;
}

/** The estimate of docs/PROTOCOL.md §28.2, for models whose tokenizer is not at hand. */
export const ESTIMATE: TokenCounter = { name: 'estimate', exact: false, count: estimateTokens };

type Encoding = 'o200k_base' | 'cl100k_base';

/**
 * OpenAI's encodings by model name, with or without a router's `openai/` prefix: o200k for the gpt-4o, gpt-4.1,
 * gpt-4.5 and gpt-5 families and the o-series, cl100k for gpt-4 and gpt-3.5 (tiktoken's table).
 */
const OPENAI_ENCODINGS: ReadonlyArray<[RegExp, Encoding]> = [
  [/^(?:openai\/)?(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d)/, 'o200k_base'],
  [/^(?:openai\/)?(?:gpt-4|gpt-3\.5)/, 'cl100k_base'],
];

/**
 * The counter for a model: OpenAI's own tokenizer (gpt-tokenizer) for an OpenAI model behind the openai-compatible
 * provider, else the estimate. The tokenizer's tables take about half a second to load, so they load in the
 * background from the moment the model is configured; until then its counts are estimates.
 */
export function tokenCounterFor(providerKind: string, model: string): TokenCounter {
  if (providerKind !== 'openai-compatible') return ESTIMATE;
  const encoding = OPENAI_ENCODINGS.find(([pattern]) => pattern.test(model))?.[1];
  if (!encoding) return ESTIMATE;
  let counter = counters.get(encoding);
  if (!counter) counters.set(encoding, (counter = new TokenizerCounter(encoding)));
  return counter;
}

/**
 * One counter per encoding: a branch's counts are kept per counter (`ContextFitter`), so that models of one tokenizer
 * answering side by side count the branch once, not once each.
 */
const counters = new Map<Encoding, TokenizerCounter>();

/** Counts with gpt-tokenizer's `encoding` once loaded, and by the estimate before. */
export class TokenizerCounter implements TokenCounter {
  private countTokens: ((text: string) => number) | undefined;
  /** Settles once the tables are loaded (or failed to load: the estimate stays). */
  readonly ready: Promise<void>;

  constructor(readonly name: Encoding) {
    this.ready = loadEncoding(name).then(
      (countTokens) => {
        this.countTokens = countTokens;
      },
      () => undefined,
    );
  }

  get exact(): boolean {
    return this.countTokens !== undefined;
  }

  count(text: string): number {
    return this.countTokens ? this.countTokens(text) : estimateTokens(text);
  }
}

/** One load per encoding for the whole process: every model of an encoding shares its tables. */
const loaded = new Map<Encoding, Promise<(text: string) => number>>();

function loadEncoding(encoding: Encoding): Promise<(text: string) => number> {
  let loading = loaded.get(encoding);
  if (!loading) {
    loading =
      encoding === 'o200k_base'
        ? import('gpt-tokenizer/encoding/o200k_base').then((module) => module.countTokens)
        : import('gpt-tokenizer/encoding/cl100k_base').then((module) => module.countTokens);
    loaded.set(encoding, loading);
  }
  return loading;
}

/**
 * The tokens of one message as a provider sends it, its text counted by `counter`: its text, a prompt's files (by
 * their estimate), an answer's tool calls' names and inputs, and its overhead.
 */
export function messageTokens(message: ModelMessage, counter: TokenCounter): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + counter.count(message.content);
  if (message.role === 'user') for (const file of message.attachments ?? []) tokens += estimateAttachmentTokens(file);
  if (message.role === 'assistant')
    for (const call of message.toolCalls ?? []) tokens += counter.count(call.toolName) + counter.count(call.input);
  return tokens;
}
