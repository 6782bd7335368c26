import { CPPError, ErrorCode, type ModelInfo } from '@promethea/cpp-protocol';
import { AttachmentsAsTextProvider } from './attachments-as-text.js';
import {
  type ContextWindow,
  DEFAULT_CONTEXT_WINDOWS,
  defaultReservedOutputTokens,
  estimateScaleOf,
} from '../context/context-window.js';
import { tokenCounterFor } from '../context/token-counter.js';
import type { ModelProvider } from './model-provider.js';

/** One model a server offers. */
export interface ModelEntry {
  /** What clients name on a prompt, and what each answer records as its `model`. Default: the provider's model name. */
  id?: string;
  /** What people see in a model picker. Default: the id. */
  label?: string;
  provider: ModelProvider;
  /** Whether the model reasons before it answers; clients may show that. Default: what the provider says. */
  reasoning?: boolean;
  /** The tokens the model reads and writes in one call. Default: its provider kind's (docs/providers.md). */
  contextWindow?: number;
  /** The part of the window kept for the answer. Default: 4,096 tokens, or a quarter of a smaller window. */
  reservedOutputTokens?: number;
  /**
   * How a branch longer than the window is fitted (docs/PROTOCOL.md §28.5): `drop-oldest` (the default) leaves the
   * oldest turns out; `summarize` has them summarised, and the model reads the summary in their place.
   */
  contextStrategy?: ContextStrategy;
  /** The id of the model that writes the summaries (`summarize`), one of the server's; default: this model. */
  summaryModel?: string;
}

export type ContextStrategy = 'drop-oldest' | 'summarize';

/**
 * The models a server offers, one of them the default: what CPP_MODELS lists, what a prompt's or pivot's `model`
 * names, and which provider writes an answer that records a model id.
 */
export class ModelCatalog {
  /** `provider` is the one configured; `answering` writes its answers (the same, or it given files as text). */
  private readonly entries = new Map<
    string,
    {
      info: ModelInfo;
      provider: ModelProvider;
      answering: ModelProvider;
      window: ContextWindow | undefined;
      /** The id of the model that summarises what this one's window leaves out; absent: it is left out. */
      summaryModel: string | undefined;
    }
  >();
  readonly defaultId: string;

  constructor(entries: readonly ModelEntry[], defaultId?: string) {
    for (const entry of entries) {
      const id = entry.id ?? entry.provider.model;
      if (this.entries.has(id)) throw new Error(`Two models have the id "${id}"; give each its own id`);
      const window = contextWindowOf(entry);
      if (window && window.tokens - window.reservedOutputTokens - window.fixedTokens <= 0)
        throw new Error(
          `Model "${id}": its context window of ${window.tokens} tokens leaves no room for a prompt after the ` +
            `${window.reservedOutputTokens} kept for its answer and the ${window.fixedTokens} of its system prompt`,
        );
      const info: ModelInfo = {
        id,
        label: entry.label ?? id,
        provider: entry.provider.provider,
        reasoning: entry.reasoning ?? entry.provider.reasoning ?? false,
      };
      if (window) info.contextWindow = window.tokens;
      const { provider } = entry;
      const answering = provider.readsAttachments ? provider : new AttachmentsAsTextProvider(provider);
      const summaryModel = entry.contextStrategy === 'summarize' ? (entry.summaryModel ?? id) : undefined;
      this.entries.set(id, { info, provider, answering, window, summaryModel });
    }
    const first = this.entries.keys().next();
    if (first.done) throw new Error('A server needs at least one model');
    this.defaultId = defaultId ?? first.value;
    if (!this.entries.has(this.defaultId))
      throw new Error(`The default model "${this.defaultId}" is not one of the models`);
    for (const [id, { summaryModel }] of this.entries)
      if (summaryModel !== undefined && !this.entries.has(summaryModel))
        throw new Error(`Model "${id}": its summaryModel "${summaryModel}" is not one of the models`);
  }

  /**
   * The model that summarises what the window of the model an answer records leaves out (docs/PROTOCOL.md §28.5), with
   * its provider; undefined when that model drops it.
   */
  summarizerOf(id: string | undefined): { id: string; provider: ModelProvider } | undefined {
    const summaryModel = (this.entries.get(id ?? this.defaultId) ?? this.entries.get(this.defaultId)!).summaryModel;
    return summaryModel === undefined ? undefined : { id: summaryModel, provider: this.providerOf(summaryModel) };
  }

  /** The id of the model a prompt or pivot named, or the default's; a name the server does not offer is UNKNOWN_MODEL. */
  resolve(id: string | undefined): string {
    if (id === undefined) return this.defaultId;
    if (!this.entries.has(id))
      throw new CPPError(
        ErrorCode.UNKNOWN_MODEL,
        `this server offers no model "${id}"; CPP_MODEL_LIST lists those it does`,
      );
    return id;
  }

  /** Whether the server offers a model of this id. */
  offers(id: string): boolean {
    return this.entries.has(id);
  }

  /**
   * The provider of the model an answer records. An answer recorded under a model no longer offered (the server was
   * restarted with others) is written by the default model.
   */
  providerOf(id: string | undefined): ModelProvider {
    return (this.entries.get(id ?? this.defaultId) ?? this.entries.get(this.defaultId)!).answering;
  }

  /** The window of the model an answer records, as `providerOf` resolves it; undefined when it has none. */
  contextWindowOf(id: string | undefined): ContextWindow | undefined {
    return (this.entries.get(id ?? this.defaultId) ?? this.entries.get(this.defaultId)!).window;
  }

  /**
   * A call of the model an answer records reported `reportedInputTokens` for a context counted `contextTokens` (its
   * system prompt aside): later counts for the model are scaled by what that showed.
   */
  calibrate(id: string | undefined, contextTokens: number, reportedInputTokens: number | undefined): void {
    const window = this.contextWindowOf(id);
    const scale = window && estimateScaleOf(contextTokens + window.fixedTokens, reportedInputTokens);
    if (window && scale !== undefined) window.estimateScale = scale;
  }

  /** Every model's provider as configured, in the order listed. */
  providers(): ModelProvider[] {
    return [...this.entries.values()].map((entry) => entry.provider);
  }

  list(): ModelInfo[] {
    return [...this.entries.values()].map(({ info }) => info);
  }
}

function contextWindowOf(entry: ModelEntry): ContextWindow | undefined {
  const tokens = entry.contextWindow ?? DEFAULT_CONTEXT_WINDOWS[entry.provider.provider];
  if (tokens === undefined) return undefined;
  const counter = tokenCounterFor(entry.provider.provider, entry.provider.model);
  return {
    tokens,
    reservedOutputTokens: entry.reservedOutputTokens ?? defaultReservedOutputTokens(tokens),
    // Counted now, by the estimate while a tokenizer loads: a system prompt is short, and the reported usage corrects.
    fixedTokens: entry.provider.systemPrompt ? counter.count(entry.provider.systemPrompt) : 0,
    estimateScale: 1,
    counter,
  };
}
