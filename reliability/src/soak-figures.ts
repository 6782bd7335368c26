import type { GenerationStatus } from '@promethea/cpp-client/node';

export type SoakAction = 'prompt' | 'pivot' | 'anchor' | 'stop' | 'disconnect';

/** What the soak counts while it runs, and every failure it did not expect, described. */
export class SoakFigures {
  readonly actions: Record<SoakAction, number> = { prompt: 0, pivot: 0, anchor: 0, stop: 0, disconnect: 0 };
  readonly answers: Record<GenerationStatus, number> = { completed: 0, interrupted: 0, failed: 0 };
  chunks = 0;
  reconnects = 0;
  readonly unexpected: string[] = [];

  failed(context: string, error: unknown): void {
    const code = typeof error === 'object' && error !== null && 'code' in error ? ` ${String(error.code)}` : '';
    this.unexpected.push(`${context}:${code} ${error instanceof Error ? error.message : String(error)}`);
  }
}
