import { describe, expect, it } from 'vitest';
import { DemoProvider } from '../../src/model/demo-provider.js';
import { LazyProvider } from '../../src/model/lazy-provider.js';
import { OllamaProvider } from '../../src/model/providers/ollama-provider.js';
import { OpenAICompatibleProvider } from '../../src/model/providers/openai-compatible-provider.js';
import { isProviderKind, type ProviderConfig } from '../../src/model/provider-config.js';
import { createModelProvider, describeProvider } from '../../src/model/provider-factory.js';
import { API_KEY } from './provider-contract.js';

describe('createModelProvider', () => {
  it.each([
    [{ provider: 'demo' }, DemoProvider, 'demo', 'cpp-demo'],
    [{ provider: 'openai-compatible' }, OpenAICompatibleProvider, 'openai-compatible', 'gpt-4o-mini'],
    // Anthropic's SDK is loaded with the first answer (anthropic-provider.test.ts streams through the factory).
    [{ provider: 'anthropic', apiKey: API_KEY }, LazyProvider, 'anthropic', 'claude-sonnet-4-6'],
    [{ provider: 'ollama' }, OllamaProvider, 'ollama', 'llama3.2'],
  ] as const)('builds %o with its default model', (config, kind, provider, model) => {
    const built = createModelProvider(config);
    expect(built).toBeInstanceOf(kind);
    expect(built).toMatchObject({ provider, model });
  });

  it('names the valid providers when given an unknown one', () => {
    expect(() => createModelProvider({ provider: 'gemini' } as unknown as ProviderConfig)).toThrow(
      'Unknown model provider "gemini"; expected one of demo, openai-compatible, anthropic, ollama',
    );
  });

  it.each([
    [{ temperature: Number.NaN }, 'Model option temperature must be a number of at least 0'],
    [{ maxTokens: 0 }, 'Model option maxTokens must be a positive integer'],
    [{ firstTokenTimeoutMs: -1 }, 'Model option firstTokenTimeoutMs must be a positive number'],
    [{ maxRetries: 1.5 }, 'Model option maxRetries must be an integer of at least 0'],
    [{ baseUrl: 'localhost:11434' }, 'The model base URL must be an http:// or https:// URL'],
    [{ baseUrl: 'not a url' }, 'The model base URL must be an http:// or https:// URL'],
  ])('refuses %o at start', (options, message) => {
    expect(() => createModelProvider({ provider: 'ollama', ...options })).toThrow(message);
  });

  it('recognises provider names given as strings', () => {
    expect(isProviderKind('anthropic')).toBe(true);
    expect(isProviderKind('gpt')).toBe(false);
  });
});

describe('describeProvider', () => {
  it('says the demo model is a demo', () => {
    expect(describeProvider({ provider: 'demo' })).toMatch(/^demo model/);
  });

  it('shows provider, model and endpoint, but neither the key nor URL credentials', () => {
    const line = describeProvider({
      provider: 'openai-compatible',
      baseUrl: 'https://user:hunter2@proxy.example/v1',
      model: 'gpt-4.1',
      apiKey: API_KEY,
    });
    expect(line).toBe('openai-compatible · model gpt-4.1 · https://proxy.example/v1 · API key set');
    expect(line).not.toContain(API_KEY);
    expect(line).not.toContain('hunter2');
  });

  it('says when no key is set', () => {
    expect(describeProvider({ provider: 'ollama' })).toBe(
      'ollama · model llama3.2 · http://127.0.0.1:11434 · no API key',
    );
  });
});
