import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

/**
 * A provider whose module is loaded with its first answer: the factory names every provider, and a process loads
 * only the vendor SDK it uses (Anthropic's takes half a second to import).
 */
export class LazyProvider implements ModelProvider {
  private loaded: Promise<ModelProvider> | undefined;

  constructor(
    readonly provider: string,
    readonly model: string,
    readonly reasoning: boolean,
    /** Whether the provider it loads reads files itself (see `ModelProvider.readsAttachments`). */
    readonly readsAttachments: boolean,
    private readonly load: () => Promise<ModelProvider>,
  ) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.loaded ??= this.load();
    yield* (await this.loaded).stream(request);
  }
}
