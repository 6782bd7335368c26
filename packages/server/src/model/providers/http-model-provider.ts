import { runGeneration } from '../generation-runner.js';
import {
  messagesToContinue,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamPart,
  type ModelTool,
} from '../model-provider.js';
import { endpoint, type ProviderSettings } from '../provider-config.js';
import { postJson } from '../upstream/http-post.js';

/**
 * What the providers written on node:http share: one generation per request (timeout, retries, cancellation) around an
 * attempt that POSTs JSON to the vendor and reads its streamed answer. A subclass says where to post, what to send
 * and how to read the answer.
 */
export abstract class HttpModelProvider implements ModelProvider {
  abstract readonly provider: string;
  readonly model: string;
  readonly reasoning: boolean;
  readonly systemPrompt: string | undefined;

  constructor(
    protected readonly settings: ProviderSettings,
    /** Names the upstream in error messages. */
    protected readonly vendor: string,
  ) {
    this.model = settings.model;
    this.reasoning = settings.reasoning;
    this.systemPrompt = settings.systemPrompt;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    return runGeneration(request.signal, {
      vendor: this.vendor,
      policy: this.settings.policy,
      // The chat completions formats have no assistant prefill that every server honours.
      open: (signal) => this.attempt(messagesToContinue(request), request.tools ?? [], signal),
    });
  }

  /** One attempt: post, then turn the vendor's stream into parts; a malformed or cut stream throws a ProviderError. */
  protected abstract attempt(
    messages: readonly ModelMessage[],
    tools: readonly ModelTool[],
    signal: AbortSignal,
  ): AsyncIterable<ModelStreamPart>;

  /** POSTs `body` to `path` under the base URL, with the API key as a bearer token when one is set. */
  protected post(
    path: string,
    body: unknown,
    signal: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<AsyncIterable<string>> {
    const { apiKey, baseUrl } = this.settings;
    return postJson({
      url: endpoint(baseUrl, path),
      headers: { ...headers, ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body,
      signal,
      vendor: this.vendor,
      apiKey,
    });
  }
}
