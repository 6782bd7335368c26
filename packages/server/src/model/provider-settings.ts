import type { GenerationPolicy } from './generation-policy.js';

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
  policy: GenerationPolicy;
}

/** `baseUrl` + `path`, whether or not the base URL ends in a slash. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}
