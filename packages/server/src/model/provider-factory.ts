import { DEMO_REASONING_WORDS, DemoProvider } from './demo-provider.js';
import { LazyProvider } from './lazy-provider.js';
import type { ModelProvider } from './model-provider.js';
import {
  isReasoningModelName,
  PROVIDER_DEFAULTS,
  PROVIDER_KINDS,
  type ProviderConfig,
  type ProviderKind,
  type ProviderSettings,
} from './provider-config.js';
import { OllamaProvider } from './providers/ollama-provider.js';
import { OpenAICompatibleProvider } from './providers/openai-compatible-provider.js';

/** Builds the configured model provider; throws an Error naming the problem when the configuration cannot work. */
export function createModelProvider(config: ProviderConfig): ModelProvider {
  switch (config.provider) {
    case 'demo':
      return new DemoProvider({
        delayMs: config.demoDelayMs,
        model: config.model,
        ...(config.reasoning === undefined ? {} : { reasoningWords: config.reasoning ? DEMO_REASONING_WORDS : 0 }),
      });
    case 'openai-compatible':
      return new OpenAICompatibleProvider(providerSettings(config, 'openai-compatible'));
    case 'ollama':
      return new OllamaProvider(providerSettings(config, 'ollama'));
    case 'anthropic': {
      const settings = providerSettings(config, 'anthropic');
      if (!settings.apiKey) throw new Error('The anthropic provider needs an API key');
      const apiKey = settings.apiKey;
      return new LazyProvider('anthropic', settings.model, settings.reasoning, true, async () => {
        const { AnthropicProvider } = await import('./providers/anthropic-provider.js');
        return new AnthropicProvider({ ...settings, apiKey, maxTokens: settings.maxTokens ?? 4096 });
      });
    }
    default:
      throw new Error(
        `Unknown model provider "${String(config.provider)}"; expected one of ${PROVIDER_KINDS.join(', ')}`,
      );
  }
}

/** One line for the CLI banner: provider, model and endpoint, and whether a key is set (never the key). */
export function describeProvider(config: ProviderConfig): string {
  if (config.provider === 'demo') {
    return 'demo model (built in, no real model configured: answers are generated text)';
  }
  const settings = providerSettings(config, config.provider);
  const key = settings.apiKey ? 'API key set' : 'no API key';
  return `${config.provider} · model ${settings.model} · ${displayUrl(settings.baseUrl)} · ${key}`;
}

function providerSettings(config: ProviderConfig, kind: Exclude<ProviderKind, 'demo'>): ProviderSettings {
  checkNumbers(config);
  const defaults = PROVIDER_DEFAULTS[kind];
  if (config.baseUrl !== undefined && !isHttpUrl(config.baseUrl))
    throw new Error('The model base URL must be an http:// or https:// URL');
  const model = config.model ?? defaults.model;
  const { thinkingBudgetTokens } = config;
  if (thinkingBudgetTokens !== undefined && kind !== 'anthropic')
    throw new Error('Only the anthropic provider takes a thinking budget');
  return {
    baseUrl: config.baseUrl ?? defaults.baseUrl,
    model,
    apiKey: config.apiKey || undefined,
    systemPrompt: config.systemPrompt || undefined,
    temperature: config.temperature,
    maxTokens: config.maxTokens ?? defaults.maxTokens,
    reasoning: config.reasoning ?? (thinkingBudgetTokens !== undefined || isReasoningModelName(model)),
    thinkingBudgetTokens,
    vision: config.vision ?? defaults.vision,
    policy: {
      firstTokenTimeoutMs: config.firstTokenTimeoutMs ?? defaults.policy.firstTokenTimeoutMs,
      stallTimeoutMs: config.stallTimeoutMs ?? defaults.policy.stallTimeoutMs,
      maxRetries: config.maxRetries ?? defaults.policy.maxRetries,
      retryBaseDelayMs: config.retryBaseDelayMs ?? defaults.policy.retryBaseDelayMs,
    },
  };
}

/** Numbers from flags or the environment may be NaN or out of range; better to refuse at start than upstream. */
function checkNumbers(config: ProviderConfig): void {
  const rules: Array<[keyof ProviderConfig, number | undefined, (value: number) => boolean, string]> = [
    ['temperature', config.temperature, (value) => value >= 0, 'a number of at least 0'],
    ['maxTokens', config.maxTokens, (value) => Number.isInteger(value) && value > 0, 'a positive integer'],
    ['firstTokenTimeoutMs', config.firstTokenTimeoutMs, (value) => value > 0, 'a positive number'],
    ['stallTimeoutMs', config.stallTimeoutMs, (value) => value > 0, 'a positive number'],
    ['maxRetries', config.maxRetries, (value) => Number.isInteger(value) && value >= 0, 'an integer of at least 0'],
    ['retryBaseDelayMs', config.retryBaseDelayMs, (value) => value >= 0, 'a number of at least 0'],
  ];
  for (const [name, value, isValid, expected] of rules) {
    if (value !== undefined && !(Number.isFinite(value) && isValid(value)))
      throw new Error(`Model option ${name} must be ${expected}`);
  }
}

/** `localhost:11434` parses as a URL of scheme `localhost:`; only http(s) reaches a model server. */
function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol);
}

/** The base URL without any user:password part, which some proxies put there. */
function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/$/, '');
}
