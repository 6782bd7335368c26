import type { ModelProvider, ModelRequest, ModelStreamPart } from '@promethea/cpp-server';
import { pacedTokens } from './paced-tokens.js';

/**
 * A model inside the server process that streams at an exact pace (50 tokens/s at the default 20 ms) and answers
 * with its first token at once, so that what the bench measures is the server, not the model.
 */
export class PacedProvider implements ModelProvider {
  readonly provider = 'bench-paced';
  readonly model = 'bench-paced';

  constructor(
    private readonly intervalMs: number,
    private readonly tokens: number,
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    for await (const text of pacedTokens(this.intervalMs, this.tokens, request.signal))
      yield { type: 'text-delta', text };
    yield { type: 'finish', finishReason: 'stop', usage: { outputTokens: this.tokens } };
  }
}
