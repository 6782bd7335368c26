import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addModelFlags, configuredModels, modelConfigOf, type ModelFlags } from '../../src/cli/model-flags.js';
import { ESTIMATE } from '../../src/context/token-counter.js';
import { ModelCatalog } from '../../src/model/model-catalog.js';

function parse(argv: string[], env: Record<string, string> = {}): ModelFlags {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    addModelFlags(program);
    return program.parse(argv, { from: 'user' }).opts<ModelFlags>();
  } finally {
    process.env = saved;
  }
}

describe('the model flags', () => {
  it('set the generation policy from flags', () => {
    const config = modelConfigOf(
      parse([
        '--model',
        'ollama',
        '--first-token-timeout-ms',
        '1000',
        '--stall-timeout-ms',
        '2000',
        '--max-retries',
        '3',
        '--retry-base-delay-ms',
        '40',
      ]),
    );
    expect(config).toMatchObject({
      provider: 'ollama',
      firstTokenTimeoutMs: 1000,
      stallTimeoutMs: 2000,
      maxRetries: 3,
      retryBaseDelayMs: 40,
    });
  });

  it('set the generation policy from the environment', () => {
    const config = modelConfigOf(
      parse([], {
        CPP_MODEL: 'anthropic',
        CPP_FIRST_TOKEN_TIMEOUT_MS: '1000',
        CPP_STALL_TIMEOUT_MS: '2000',
        CPP_MAX_RETRIES: '0',
        CPP_RETRY_BASE_DELAY_MS: '40',
      }),
    );
    expect(config).toMatchObject({
      provider: 'anthropic',
      firstTokenTimeoutMs: 1000,
      stallTimeoutMs: 2000,
      maxRetries: 0,
      retryBaseDelayMs: 40,
    });
  });

  it('leave the policy to the provider defaults when unset', () => {
    const config = modelConfigOf(parse([]));
    expect(config).toMatchObject({ provider: 'demo' });
    expect(config.stallTimeoutMs).toBeUndefined();
    expect(config.maxRetries).toBeUndefined();
  });

  it("switch Anthropic's extended thinking on from the flag or the environment", () => {
    expect(modelConfigOf(parse(['--model', 'anthropic', '--thinking-budget-tokens', '2048']))).toMatchObject({
      thinkingBudgetTokens: 2048,
    });
    expect(modelConfigOf(parse([], { CPP_MODEL: 'anthropic', CPP_THINKING_BUDGET_TOKENS: '4096' }))).toMatchObject({
      thinkingBudgetTokens: 4096,
    });
  });

  it('offer the demo model, its reasoning mode and its agent when no model is configured', async () => {
    const { models } = await configuredModels(parse(['--demo-delay-ms', '0']));
    expect(models.map((entry) => [entry.provider.model, entry.provider.reasoning])).toEqual([
      ['cpp-demo', false],
      ['demo-reasoning', true],
      ['demo-tools', false],
    ]);
  });

  it("set every model's context window and the answer's room from the flags or the environment", async () => {
    const { models } = await configuredModels(
      parse(['--demo-delay-ms', '0', '--context-window', '4000'], { CPP_RESERVED_OUTPUT_TOKENS: '300' }),
    );
    const catalog = new ModelCatalog(models);
    expect(catalog.list().map((model) => model.contextWindow)).toEqual([4000, 4000, 4000]);
    expect(catalog.contextWindowOf(undefined)).toEqual({
      tokens: 4000,
      reservedOutputTokens: 300,
      fixedTokens: 0,
      estimateScale: 1,
      counter: ESTIMATE,
    });
    const unset = new ModelCatalog((await configuredModels(parse([]))).models);
    expect(unset.contextWindowOf(undefined)).toEqual({
      tokens: 2048,
      reservedOutputTokens: 512,
      fixedTokens: 0,
      estimateScale: 1,
      counter: ESTIMATE,
    });
  });

  it('refuse a value that is not a whole number', () => {
    expect(() => parse(['--stall-timeout-ms', 'soon'])).toThrow(/whole number/);
  });
});
