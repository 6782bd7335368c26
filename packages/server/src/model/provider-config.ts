import { DEFAULT_GENERATION_POLICY, type GenerationPolicy } from './generation-runner.js';

export const PROVIDER_KINDS = ['demo', 'openai-compatible', 'anthropic', 'ollama'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Which model to use, as the CLI, the environment or code give it; unset fields take the provider's defaults. */
export interface ProviderConfig {
  provider: ProviderKind;
  baseUrl?: string;
  /** The model name sent upstream and recorded on each assistant node. */
  model?: string;
  /** Never logged, never shown to clients. */
  apiKey?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  /**
   * Whether the model reasons before it answers. Unset: OpenAI's reasoning models (`o1`, `o3`, `o4-mini`, `gpt-5`…,
   * also behind a router's `openai/` prefix) are recognised by name, other models are taken not to.
   */
  reasoning?: boolean;
  firstTokenTimeoutMs?: number;
  /** Cut an answer whose stream, once started, sends nothing for this long. */
  stallTimeoutMs?: number;
  maxRetries?: number;
  /** The first retry's delay; later ones double it. */
  retryBaseDelayMs?: number;
  /** The demo model's pause before each word. */
  demoDelayMs?: number;
  /**
   * Anthropic only: switch on extended thinking, with this many tokens to think in (at least 1,024), on top of
   * `maxTokens` for the answer. The model then reasons (`reasoning` defaults to true).
   */
  thinkingBudgetTokens?: number;
  /**
   * Whether the model sees images (and, with Anthropic, PDFs), given to it in the vendor's format. Unset: true for
   * OpenAI-compatible servers and Anthropic, false for Ollama, whose common models read text only. A model that does
   * not is given each file as text or a note naming it (docs/PROTOCOL.md §27.7).
   */
  vision?: boolean;
}

export function isProviderKind(value: string): value is ProviderKind {
  return (PROVIDER_KINDS as readonly string[]).includes(value);
}

export interface ProviderDefaults {
  baseUrl: string;
  model: string;
  /** Only Anthropic requires a limit; the others stop when the model does. */
  maxTokens?: number;
  /** Whether the vendor's models are taken to see images unless told otherwise. */
  vision: boolean;
  policy: GenerationPolicy;
}

/** Documented in docs/providers.md; keep the two in step. */
export const PROVIDER_DEFAULTS: Record<Exclude<ProviderKind, 'demo'>, ProviderDefaults> = {
  'openai-compatible': {
    baseUrl: 'https://api.openai.com/v1',
    model: 'gpt-4o-mini',
    vision: true,
    policy: DEFAULT_GENERATION_POLICY,
  },
  anthropic: {
    baseUrl: 'https://api.anthropic.com',
    model: 'claude-sonnet-4-6',
    maxTokens: 4096,
    vision: true,
    policy: DEFAULT_GENERATION_POLICY,
  },
  // A local model may first have to be loaded from disk, which can take minutes for a large one.
  ollama: {
    baseUrl: 'http://127.0.0.1:11434',
    model: 'llama3.2',
    vision: false,
    policy: { ...DEFAULT_GENERATION_POLICY, firstTokenTimeoutMs: 300_000 },
  },
};

/** What every HTTP model provider is built from; `createModelProvider` fills in the defaults. */
export interface ProviderSettings {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434`. */
  baseUrl: string;
  model: string;
  /** Sent upstream only; never logged, never in an error message. */
  apiKey?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  reasoning: boolean;
  /** Anthropic's extended thinking, when set: the tokens it may think in. */
  thinkingBudgetTokens?: number;
  /** Whether the model is given images (and, with Anthropic, PDFs) in the vendor's format. */
  vision: boolean;
  policy: GenerationPolicy;
}

/** OpenAI's reasoning model families, by name, with or without a router's `openai/` prefix. */
const OPENAI_REASONING_MODEL = /^(?:openai\/)?(?:o\d|gpt-5)/;

export function isReasoningModelName(model: string): boolean {
  return OPENAI_REASONING_MODEL.test(model);
}

/** `baseUrl` + `path`, whether or not the base URL ends in a slash. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}
