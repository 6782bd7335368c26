import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { ModelEntry } from '../model/model-catalog.js';
import { PROVIDER_KINDS, type ProviderConfig } from '../model/provider-config.js';
import { DEMO_REASONING_MODEL } from '../model/demo-provider.js';
import { createModelProvider, describeProvider } from '../model/provider-factory.js';

const PositiveNumber = z.number().positive();
const Count = z.number().int().nonnegative();

/**
 * One model of a models file: a `ProviderConfig` with an id and a label. The key comes from the environment
 * (`apiKeyEnv` names the variable), so that the file holds no secret. Unknown keys are refused: a misspelt setting
 * would otherwise be silently ignored.
 */
const ModelsFileEntrySchema = z
  .strictObject({
    id: z.string().min(1).max(200).optional(),
    label: z.string().min(1).optional(),
    provider: z.enum(PROVIDER_KINDS, {
      error: `expected one of ${PROVIDER_KINDS.join(', ')} (the demo's reasoning model is provider demo, model ${DEMO_REASONING_MODEL})`,
    }),
    baseUrl: z
      .string()
      .refine((url) => URL.canParse(url) && ['http:', 'https:'].includes(new URL(url).protocol), {
        error: 'expected an http:// or https:// URL',
      })
      .optional(),
    model: z.string().min(1).optional(),
    apiKeyEnv: z.string().min(1).optional(),
    systemPrompt: z.string().optional(),
    temperature: z.number().nonnegative().optional(),
    maxTokens: z.number().int().positive().optional(),
    reasoning: z.boolean().optional(),
    /** Whether the model sees images (and, with Anthropic, PDFs); default per provider. */
    vision: z.boolean().optional(),
    firstTokenTimeoutMs: PositiveNumber.optional(),
    stallTimeoutMs: PositiveNumber.optional(),
    maxRetries: Count.optional(),
    retryBaseDelayMs: Count.optional(),
    demoDelayMs: Count.optional(),
    contextWindow: z.number().int().positive().optional(),
    reservedOutputTokens: z.number().int().positive().optional(),
    /** How a branch longer than the window is fitted (docs/PROTOCOL.md §28.5): its oldest turns dropped, or summarised. */
    contextStrategy: z.enum(['drop-oldest', 'summarize']).optional(),
    /** The id of the model that writes the summary, one of this file's; default: the model itself. */
    summaryModel: z.string().min(1).optional(),
    /** Anthropic's extended thinking: its minimum budget is 1,024 tokens. */
    thinkingBudgetTokens: z.number().int().min(1024).optional(),
  })
  .superRefine((entry, context) => {
    if (entry.thinkingBudgetTokens !== undefined && entry.provider !== 'anthropic')
      context.addIssue({
        code: 'custom',
        path: ['thinkingBudgetTokens'],
        message: 'only the anthropic provider takes it',
      });
    if (entry.provider === 'anthropic' && entry.apiKeyEnv === undefined)
      context.addIssue({
        code: 'custom',
        path: ['apiKeyEnv'],
        message: 'the anthropic provider needs a key: name the environment variable that holds it',
      });
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
  const invalid = (problem: string) => new Error(`The models file ${path} is not valid: ${problem}`);
  const parsed = ModelsFileSchema.safeParse(json);
  if (!parsed.success) throw invalid(parsed.error.issues.map(describeIssue).join('; '));
  const models = parsed.data.models.map((entry, index) => {
    const { apiKeyEnv } = entry;
    const apiKey = apiKeyEnv === undefined ? undefined : env[apiKeyEnv];
    if (apiKeyEnv !== undefined && !apiKey)
      throw invalid(`models[${index}].apiKeyEnv: names ${apiKeyEnv}, which is not set`);
    const config = configOf(entry, policy, apiKey);
    try {
      return { entry, config, provider: createModelProvider(config) };
    } catch (error) {
      throw invalid(`models[${index}]: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  const ids = models.map(({ entry, provider }) => entry.id ?? provider.model);
  ids.forEach((id, index) => {
    const first = ids.indexOf(id);
    if (first < index)
      throw invalid(`models[${index}].id: "${id}" is the id of models[${first}] too; give each its own`);
  });
  models.forEach(({ entry }, index) => {
    if (entry.summaryModel !== undefined && !ids.includes(entry.summaryModel))
      throw invalid(
        `models[${index}].summaryModel: "${entry.summaryModel}" is not the id of any model (${ids.join(', ')})`,
      );
  });
  const defaultModel = parsed.data.default;
  if (defaultModel !== undefined && !ids.includes(defaultModel))
    throw invalid(`default: "${defaultModel}" is not the id of any model (${ids.join(', ')})`);
  return {
    models: models.map(({ entry, provider }) => ({
      id: entry.id,
      label: entry.label,
      provider,
      ...withoutUnset({
        contextWindow: entry.contextWindow,
        reservedOutputTokens: entry.reservedOutputTokens ?? entry.maxTokens,
        contextStrategy: entry.contextStrategy,
        summaryModel: entry.summaryModel,
      }),
    })),
    defaultModel,
    descriptions: models.map(({ config }, index) => `${ids[index]}: ${describeProvider(config)}`),
  };
}

/** One problem on one line, led by the field it is about: `models[0].provider: expected one of …`. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return `${path.replace(/^\./, '') || 'the file'}: ${issue.message}`;
}

/** `values` without the keys whose value is `undefined`. */
export function withoutUnset<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function configOf(
  {
    id: _id,
    label: _label,
    apiKeyEnv: _apiKeyEnv,
    contextWindow: _contextWindow,
    reservedOutputTokens: _reservedOutputTokens,
    contextStrategy: _contextStrategy,
    summaryModel: _summaryModel,
    ...entry
  }: ModelsFileEntry,
  policy: Partial<ProviderConfig>,
  apiKey: string | undefined,
): ProviderConfig {
  return { ...policy, ...entry, ...(apiKey ? { apiKey } : {}) };
}
