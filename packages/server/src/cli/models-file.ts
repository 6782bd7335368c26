import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ModelEntry } from '../model/model-catalog.js';
import { PROVIDER_KINDS, type ProviderConfig } from '../model/provider-config.js';
import { createModelProvider, describeProvider } from '../model/provider-factory.js';

const PositiveNumber = z.number().positive();
const Count = z.number().int().nonnegative();

/**
 * One model of a models file: a `ProviderConfig` with an id and a label. The key comes from the environment
 * (`apiKeyEnv` names the variable), so that the file holds no secret. Unknown keys are refused: a misspelt setting
 * would otherwise be silently ignored.
 */
const ModelsFileEntrySchema = z.strictObject({
  id: z.string().min(1).max(200).optional(),
  label: z.string().min(1).optional(),
  provider: z.enum(PROVIDER_KINDS),
  baseUrl: z.string().optional(),
  model: z.string().min(1).optional(),
  apiKeyEnv: z.string().min(1).optional(),
  systemPrompt: z.string().optional(),
  temperature: z.number().nonnegative().optional(),
  maxTokens: z.number().int().positive().optional(),
  reasoning: z.boolean().optional(),
  firstTokenTimeoutMs: PositiveNumber.optional(),
  stallTimeoutMs: PositiveNumber.optional(),
  maxRetries: Count.optional(),
  retryBaseDelayMs: Count.optional(),
  demoDelayMs: Count.optional(),
  /** Anthropic's extended thinking: its minimum budget is 1,024 tokens. */
  thinkingBudgetTokens: z.number().int().min(1024).optional(),
});

const ModelsFileSchema = z.strictObject({
  /** The id of the model a prompt without `model` gets; default: the first. */
  default: z.string().optional(),
  models: z.array(ModelsFileEntrySchema).min(1),
});

type ModelsFileEntry = z.infer<typeof ModelsFileEntrySchema>;

export interface ConfiguredModels {
  models: ModelEntry[];
  defaultModel?: string;
  /** One banner line per model, never with its key. */
  descriptions: string[];
}

/**
 * The models a models file lists (docs/providers.md, "Several models"), each built as `createModelProvider` builds
 * one; `policy` (the flags' timeouts and retries) applies to entries that do not set their own.
 */
export async function readModelsFile(
  path: string,
  policy: Partial<ProviderConfig>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ConfiguredModels> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new Error(
      `The models file ${path} could not be read as JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const parsed = ModelsFileSchema.safeParse(json);
  if (!parsed.success) throw new Error(`The models file ${path} is not valid: ${z.prettifyError(parsed.error)}`);
  const configs = parsed.data.models.map((entry) => configOf(entry, policy, env));
  return {
    models: parsed.data.models.map((entry, index) => ({
      ...(entry.id === undefined ? {} : { id: entry.id }),
      ...(entry.label === undefined ? {} : { label: entry.label }),
      provider: createModelProvider(configs[index]!),
    })),
    ...(parsed.data.default === undefined ? {} : { defaultModel: parsed.data.default }),
    descriptions: configs.map(
      (config, index) =>
        `${parsed.data.models[index]!.id ?? config.model ?? config.provider}: ${describeProvider(config)}`,
    ),
  };
}

function configOf(
  { id: _id, label: _label, apiKeyEnv, ...entry }: ModelsFileEntry,
  policy: Partial<ProviderConfig>,
  env: NodeJS.ProcessEnv,
): ProviderConfig {
  const apiKey = apiKeyEnv === undefined ? undefined : env[apiKeyEnv];
  if (apiKeyEnv !== undefined && !apiKey)
    throw new Error(`The models file names the key variable ${apiKeyEnv}, which is not set`);
  return { ...policy, ...entry, ...(apiKey ? { apiKey } : {}) };
}
