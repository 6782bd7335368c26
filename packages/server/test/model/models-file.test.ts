import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readModelsFile } from '../../src/cli/models-file.js';
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

  it.each([
    ['not JSON', '{ models: ', /could not be read as JSON/],
    ['without models', { models: [] }, /models/],
    ['with a misspelt setting', { models: [{ provider: 'ollama', temprature: 0.2 }] }, /temprature/],
    ['with an unknown provider', { models: [{ provider: 'gpt' }] }, /provider/],
    [
      'naming a key variable that is not set',
      { models: [{ provider: 'openai-compatible', apiKeyEnv: 'TEST_UNSET_KEY' }] },
      /TEST_UNSET_KEY, which is not set/,
    ],
  ])('is refused %s, saying why', async (_case, content, message) => {
    await expect(readModelsFile(modelsFile(content), {}, {})).rejects.toThrow(message);
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
          { id: 'quick', label: 'quick', provider: 'demo', reasoning: false },
          { id: 'slow', label: 'Slow demo', provider: 'demo', reasoning: false },
        ],
        defaultModel: 'slow',
      });
    } finally {
      await client.close();
    }
  });
});
