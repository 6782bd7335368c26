import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readModelsFile } from '../../src/cli/models-file.js';
import { ESTIMATE } from '../../src/context/token-counter.js';
import { ModelCatalog } from '../../src/model/model-catalog.js';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { RawClient } from '../support/raw-client.js';
import { drain, streamOf } from './provider-contract.js';
import { fixture, type ReplayServer, sse, startReplayServer } from './replay-server.js';

const folder = mkdtempSync(join(tmpdir(), 'cpp-models-file-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let written = 0;
function modelsFile(content: unknown): string {
  const path = join(folder, `models-${(written += 1)}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('a models file', () => {
  let replay: ReplayServer | undefined;
  let cli: CliServer | undefined;
  afterEach(async () => {
    await replay?.close();
    await cli?.kill('SIGTERM');
    [replay, cli] = [undefined, undefined];
  });

  it('builds each model with its own settings, its key from the variable it names, and the flags policy beneath', async () => {
    replay = await startReplayServer(sse(fixture('openai-chat-stream.sse')));
    const path = modelsFile({
      default: 'local',
      models: [
        {
          id: 'hosted',
          label: 'Hosted',
          provider: 'openai-compatible',
          baseUrl: replay.url,
          model: 'o4-mini',
          apiKeyEnv: 'TEST_HOSTED_KEY',
          maxTokens: 64,
          systemPrompt: 'Be brief.',
        },
        { id: 'local', provider: 'ollama', model: 'qwen3:8b', reasoning: true, stallTimeoutMs: 5000 },
      ],
    });
    const configured = await readModelsFile(
      path,
      { maxRetries: 0, stallTimeoutMs: 1234 },
      { TEST_HOSTED_KEY: 'sk-hosted-0123456789abcdef' },
    );
    expect(configured.defaultModel).toBe('local');
    expect(
      configured.models.map(({ id, label, provider }) => ({
        id,
        label,
        model: provider.model,
        reasoning: provider.reasoning,
      })),
    ).toEqual([
      { id: 'hosted', label: 'Hosted', model: 'o4-mini', reasoning: true },
      { id: 'local', label: undefined, model: 'qwen3:8b', reasoning: true },
    ]);
    expect(configured.descriptions.join('\n')).not.toContain('sk-hosted');
    const { error } = await drain(streamOf(configured.models[0]!.provider));
    expect(error).toBeUndefined();
    expect(replay.requests[0]?.headers.authorization).toBe('Bearer sk-hosted-0123456789abcdef');
    expect(replay.requests[0]?.body).toMatchObject({
      model: 'o4-mini',
      max_completion_tokens: 64,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  it("gives each model its context window: set, its provider's default, and less its system prompt and answer's room", async () => {
    const path = modelsFile({
      models: [
        { id: 'set', provider: 'ollama', contextWindow: 32768, reservedOutputTokens: 1000, systemPrompt: 'Be brief.' },
        { id: 'by-max-tokens', provider: 'openai-compatible', maxTokens: 2000 },
        { id: 'by-provider', provider: 'anthropic', apiKeyEnv: 'TEST_ANTHROPIC_KEY' },
      ],
    });
    const configured = await readModelsFile(path, {}, { TEST_ANTHROPIC_KEY: 'sk-ant-0123456789' });
    const catalog = new ModelCatalog(configured.models);
    expect(catalog.list().map(({ id, contextWindow }) => [id, contextWindow])).toEqual([
      ['set', 32768],
      ['by-max-tokens', 128000],
      ['by-provider', 200000],
    ]);
    // 'Be brief.': 9 ASCII code units, 3 tokens by the estimate.
    expect(catalog.contextWindowOf('set')).toEqual({
      tokens: 32768,
      reservedOutputTokens: 1000,
      fixedTokens: 3,
      estimateScale: 1,
      counter: ESTIMATE,
    });
    expect(catalog.contextWindowOf('by-max-tokens')?.reservedOutputTokens).toBe(2000);
    expect(catalog.contextWindowOf('by-provider')?.reservedOutputTokens).toBe(4096);
  });

  it('fits a branch by summarising with the model an entry names, or itself; an unknown summary model is refused', async () => {
    const path = modelsFile({
      models: [
        { id: 'big', provider: 'demo', contextStrategy: 'summarize', summaryModel: 'small' },
        { id: 'self', provider: 'demo', contextStrategy: 'summarize' },
        { id: 'small', provider: 'demo' },
      ],
    });
    const catalog = new ModelCatalog((await readModelsFile(path, {})).models);
    expect(catalog.summarizerOf('big')?.id).toBe('small');
    expect(catalog.summarizerOf('self')?.id).toBe('self');
    expect(catalog.summarizerOf('small')).toBeUndefined();
    const wrong = modelsFile({ models: [{ id: 'big', provider: 'demo', summaryModel: 'nowhere' }] });
    await expect(readModelsFile(wrong, {})).rejects.toThrow(
      /models\[0\]\.summaryModel: "nowhere" is not the id of any model/,
    );
  });

  it('refuses a context window that leaves no room for a prompt', async () => {
    const path = modelsFile({ models: [{ provider: 'demo', contextWindow: 100, reservedOutputTokens: 100 }] });
    const { models } = await readModelsFile(path, {});
    expect(() => new ModelCatalog(models)).toThrow(/context window of 100 tokens leaves no room for a prompt/);
  });

  it.each([
    ['not JSON', '{ models: ', /could not be read as JSON: /],
    ['empty, as a crash can leave it', '', /could not be read as JSON: /],
    ['without models', { models: [] }, /: models: /],
    ['with a misspelt setting', { models: [{ provider: 'ollama', temprature: 0.2 }] }, /: models\[0\]: .*temprature/],
    ['with an unknown key', { models: [{ provider: 'demo' }], extra: 1 }, /: the file: .*extra/],
    [
      'with an unknown provider',
      { models: [{ provider: 'demo-reasoning' }] },
      /: models\[0\]\.provider: expected one of demo, .* provider demo, model demo-reasoning/,
    ],
    [
      'with a setting of the wrong type',
      { models: [{ provider: 'demo', temperature: 'warm' }] },
      /models\[0\]\.temperature: /,
    ],
    [
      'with a base URL that is not http',
      { models: [{ provider: 'ollama', baseUrl: 'localhost:1' }] },
      /models\[0\]\.baseUrl: /,
    ],
    [
      'with a thinking budget for a provider without one',
      { models: [{ provider: 'ollama', thinkingBudgetTokens: 2048 }] },
      /models\[0\]\.thinkingBudgetTokens: only the anthropic provider/,
    ],
    ['with an anthropic model without a key', { models: [{ provider: 'anthropic' }] }, /models\[0\]\.apiKeyEnv: /],
    [
      'naming a key variable that is not set',
      { models: [{ provider: 'openai-compatible', apiKeyEnv: 'TEST_UNSET_KEY' }] },
      /models\[0\]\.apiKeyEnv: names TEST_UNSET_KEY, which is not set/,
    ],
    [
      'with two models of one id',
      { models: [{ provider: 'demo' }, { provider: 'demo', model: 'cpp-demo' }] },
      /models\[1\]\.id: "cpp-demo" is the id of models\[0\] too/,
    ],
    ['with a default that is no model', { default: 'big', models: [{ provider: 'demo' }] }, /default: "big" is not/],
  ])('is refused %s, in one line naming the file and the field', async (_case, content, message) => {
    const path = modelsFile(content);
    const error = await readModelsFile(path, {}, {}).then(
      () => undefined,
      (thrown: Error) => thrown,
    );
    expect(error?.message).toMatch(message);
    expect(error?.message).toContain(`The models file ${path} `);
    expect(error?.message).not.toContain('\n');
  });

  it('tells a model it does not see images when its entry says vision: false', async () => {
    replay = await startReplayServer(sse(fixture('openai-chat-stream.sse')));
    const path = modelsFile({
      models: [{ id: 'local', provider: 'openai-compatible', baseUrl: replay.url, model: 'text-only', vision: false }],
    });
    const [model] = (await readModelsFile(path, {})).models;
    const image = new Uint8Array([1, 2, 3]);
    const attachment = { name: 'a.png', mediaType: 'image/png' as const, size: 3, sha256: '0'.repeat(64) };
    const messages = [
      { role: 'user' as const, content: 'See', attachments: [{ ...attachment, bytes: async () => image }] },
    ];

    await drain(model!.provider.stream({ messages, signal: new AbortController().signal }));

    expect(replay.requests[0]?.body).toMatchObject({
      messages: [{ role: 'user', content: expect.stringMatching(/^See\n\n\[The person attached the image "a\.png"/) }],
    });
    await expect(readModelsFile(modelsFile({ models: [{ provider: 'ollama', vision: 'yes' }] }), {})).rejects.toThrow(
      /models\[0\]\.vision: /,
    );
  });

  it("offers the demo's two models like any provider's: named by model, reasoning when asked to", async () => {
    const configured = await readModelsFile(
      modelsFile({
        models: [
          { id: 'thinker', provider: 'demo', model: 'demo-reasoning', reasoning: true, demoDelayMs: 0 },
          { provider: 'demo', model: 'demo-reasoning', demoDelayMs: 0 },
          { provider: 'demo', demoDelayMs: 0 },
          { id: 'pondering', provider: 'demo', reasoning: true, demoDelayMs: 0 },
        ],
      }),
      {},
      {},
    );
    const catalog = new ModelCatalog(configured.models, configured.defaultModel);
    expect(catalog.list().map(({ id, reasoning }) => [id, reasoning])).toEqual([
      ['thinker', true],
      ['demo-reasoning', true],
      ['cpp-demo', false],
      ['pondering', true],
    ]);
    const reasoningOf = async (id: string) =>
      (await drain(streamOf(catalog.providerOf(id)))).parts.some((part) => part.type === 'reasoning-delta');
    expect(await reasoningOf('thinker')).toBe(true);
    expect(await reasoningOf('cpp-demo')).toBe(false);
    expect(await reasoningOf('pondering')).toBe(true);
  });

  it('gives cpp-server its models, listed to clients', async () => {
    const path = modelsFile({
      models: [
        { id: 'quick', provider: 'demo', demoDelayMs: 0 },
        { id: 'slow', label: 'Slow demo', provider: 'demo' },
      ],
      default: 'slow',
    });
    cli = await startCliServer(['--db', join(folder, 'cli.sqlite'), '--models-file', path]);
    const client = await RawClient.connect(cli.url);
    try {
      client.send('CPP_MODEL_LIST', {});
      expect((await client.next('CPP_MODELS')).payload).toEqual({
        models: [
          { id: 'quick', label: 'quick', provider: 'demo', reasoning: false, contextWindow: 2048 },
          { id: 'slow', label: 'Slow demo', provider: 'demo', reasoning: false, contextWindow: 2048 },
        ],
        defaultModel: 'slow',
      });
    } finally {
      await client.close();
    }
  });
});
