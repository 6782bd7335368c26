import { Option, type Command } from 'commander';
import { PROVIDER_KINDS, type ProviderConfig, type ProviderKind } from '../model/provider-config.js';
import { demoModels } from '../model/demo-provider.js';
import { createModelProvider, describeProvider } from '../model/provider-factory.js';
import { decimal, integer } from './argument-parsers.js';
import { type ConfiguredModels, readModelsFile, withoutUnset } from './models-file.js';

/** The flags of `cpp-server` that choose and tune the model: the table of docs/providers.md. */
export interface ModelFlags {
  modelsFile?: string;
  model: ProviderKind;
  modelBaseUrl?: string;
  modelName?: string;
  modelApiKey?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  firstTokenTimeoutMs?: number;
  stallTimeoutMs?: number;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  demoDelayMs?: number;
  thinkingBudgetTokens?: number;
  contextWindow?: number;
  reservedOutputTokens?: number;
}

export function addModelFlags(program: Command): void {
  program
    .addOption(
      new Option(
        '--models-file <path>',
        'a JSON file of the models clients may choose from; replaces --model and the settings after it',
      ).env('CPP_MODELS_FILE'),
    )
    .addOption(
      new Option('--model <provider>', 'model provider').env('CPP_MODEL').default('demo').choices(PROVIDER_KINDS),
    )
    .addOption(new Option('--model-base-url <url>', 'base URL of the model API').env('CPP_MODEL_BASE_URL'))
    .addOption(new Option('--model-name <name>', 'model name').env('CPP_MODEL_NAME'))
    .addOption(
      new Option('--model-api-key <key>', 'API key (prefer the environment variable: flags show in ps)').env(
        'CPP_MODEL_API_KEY',
      ),
    )
    .addOption(new Option('--system-prompt <text>', 'system prompt given to the model').env('CPP_SYSTEM_PROMPT'))
    .addOption(new Option('--temperature <number>', 'sampling temperature').env('CPP_TEMPERATURE').argParser(decimal))
    .addOption(new Option('--max-tokens <count>', 'largest answer, in tokens').env('CPP_MAX_TOKENS').argParser(integer))
    .addOption(
      new Option('--first-token-timeout-ms <ms>', 'fail an answer that has not started within this time')
        .env('CPP_FIRST_TOKEN_TIMEOUT_MS')
        .argParser(integer),
    )
    .addOption(
      new Option('--stall-timeout-ms <ms>', 'cut an answer whose stream sends nothing for this long')
        .env('CPP_STALL_TIMEOUT_MS')
        .argParser(integer),
    )
    .addOption(
      new Option('--max-retries <count>', 'further attempts after a 429 or 5xx before the first token')
        .env('CPP_MAX_RETRIES')
        .argParser(integer),
    )
    .addOption(
      new Option('--retry-base-delay-ms <ms>', 'wait before the first retry, doubled for each next one')
        .env('CPP_RETRY_BASE_DELAY_MS')
        .argParser(integer),
    )
    .addOption(
      new Option('--demo-delay-ms <ms>', 'pause before each word of the demo model')
        .env('CPP_DEMO_DELAY_MS')
        .argParser(integer),
    )
    .addOption(
      new Option('--context-window <tokens>', 'tokens the model reads and writes in one call (default: by provider)')
        .env('CPP_CONTEXT_WINDOW')
        .argParser(integer),
    )
    .addOption(
      new Option('--reserved-output-tokens <tokens>', 'part of the context window kept for the answer')
        .env('CPP_RESERVED_OUTPUT_TOKENS')
        .argParser(integer),
    )
    .addOption(
      new Option(
        '--thinking-budget-tokens <count>',
        'anthropic: switch on extended thinking with this many tokens to think in',
      )
        .env('CPP_THINKING_BUDGET_TOKENS')
        .argParser(integer),
    );
}

/**
 * The models the flags configure: those of the models file, or the one model of the other flags (the demo model also
 * under its reasoning mode).
 */
export async function configuredModels(flags: ModelFlags): Promise<ConfiguredModels> {
  const config = modelConfigOf(flags);
  if (flags.modelsFile) {
    const { firstTokenTimeoutMs, stallTimeoutMs, maxRetries, retryBaseDelayMs } = config;
    return readModelsFile(
      flags.modelsFile,
      withoutUnset({ firstTokenTimeoutMs, stallTimeoutMs, maxRetries, retryBaseDelayMs }),
    );
  }
  const window = withoutUnset({ contextWindow: flags.contextWindow, reservedOutputTokens: flags.reservedOutputTokens });
  const models =
    config.provider === 'demo'
      ? demoModels({ delayMs: config.demoDelayMs })
      : [{ provider: createModelProvider(config) }];
  return { models: models.map((entry) => ({ ...entry, ...window })), descriptions: [describeProvider(config)] };
}

export function modelConfigOf(flags: ModelFlags): ProviderConfig {
  return {
    provider: flags.model,
    baseUrl: flags.modelBaseUrl,
    model: flags.modelName,
    apiKey: flags.modelApiKey,
    systemPrompt: flags.systemPrompt,
    temperature: flags.temperature,
    maxTokens: flags.maxTokens,
    firstTokenTimeoutMs: flags.firstTokenTimeoutMs,
    stallTimeoutMs: flags.stallTimeoutMs,
    maxRetries: flags.maxRetries,
    retryBaseDelayMs: flags.retryBaseDelayMs,
    demoDelayMs: flags.demoDelayMs,
    thinkingBudgetTokens: flags.thinkingBudgetTokens,
  };
}
