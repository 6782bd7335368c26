import { performance } from 'node:perf_hooks';
import { ErrorCode, type ClientFrame } from '@promethea/cpp-protocol';
import type { Registry } from 'prom-client';
import { encodedFrameType } from './frame-type.js';
import { processMetrics } from './process-metrics.js';
import { promClient } from './prom-client.js';
import { runObserved } from './run-observed.js';
import type {
  GenerationObservation,
  GenerationResult,
  GenerationStart,
  ObservedConnection,
  PivotObservation,
  SentError,
  ServerObserver,
  StoreOperationTiming,
} from './server-observer.js';
import { ServerMetrics, type ServerGauges } from './server-metrics.js';

/** Prometheus metrics of a server, kept up to date as an observer and served by GET /metrics. */
export class MetricsObserver implements ServerObserver {
  /** What GET /metrics serves. */
  readonly registry: Registry;
  private readonly metrics: ServerMetrics;

  /**
   * With a `registry` of the application's, the cpp_* series join it and it is served as it is. Without, the
   * server has a registry of its own, served together with the process metrics (event-loop delay among them).
   */
  constructor(gauges: ServerGauges, registry?: Registry) {
    const { Registry } = promClient();
    const target = registry ?? new Registry();
    this.metrics = new ServerMetrics(target, gauges);
    this.registry = registry ?? Registry.merge([processMetrics(), target]);
  }

  frameReceived(_connection: ObservedConnection, frame: ClientFrame): void {
    this.metrics.framesReceived.inc({ type: frame.type });
  }

  frameSent(_connection: ObservedConnection, frame: string): void {
    this.metrics.framesSent.inc({ type: encodedFrameType(frame) });
  }

  errorSent(_connection: ObservedConnection, error: SentError): void {
    this.metrics.errors.inc({ code: error.code });
  }

  storeOperation({ operation, durationMs, failed }: StoreOperationTiming): void {
    this.metrics.storeOperations.observe({ operation, result: failed ? 'error' : 'ok' }, durationMs / 1000);
  }

  pivotStarted(): PivotObservation {
    const start = performance.now();
    return {
      step: (name, work) => {
        const stepStart = performance.now();
        return runObserved(work, () => this.metrics.pivotSteps.observe({ step: name }, secondsSince(stepStart)));
      },
      halted: () => this.metrics.pivotHalt.observe(secondsSince(start)),
      end: () => undefined,
    };
  }

  generationStarted({ provider, model }: GenerationStart): GenerationObservation {
    const labels = { provider, model };
    const start = performance.now();
    let firstChunkAt: number | undefined;
    this.metrics.activeGenerations.inc();
    return {
      firstChunk: () => {
        firstChunkAt = performance.now();
        this.metrics.firstToken.observe(labels, (firstChunkAt - start) / 1000);
      },
      ended: (result) => {
        this.metrics.activeGenerations.dec();
        this.metrics.generations.inc({ ...labels, outcome: result.outcome.kind });
        if (result.outcome.kind === 'failed') this.metrics.errors.inc({ code: ErrorCode.PROVIDER_ERROR });
        if (firstChunkAt !== undefined) this.observeSpeed(labels, result, firstChunkAt);
      },
    };
  }

  /** Tokens per second after the first one, for answers that completed: halted ones end at an arbitrary point. */
  private observeSpeed(
    labels: { provider: string; model: string },
    { outcome, chunkCount }: GenerationResult,
    firstChunkAt: number,
  ): void {
    if (outcome.kind !== 'completed') return;
    const tokens = outcome.usage?.outputTokens ?? chunkCount;
    const seconds = secondsSince(firstChunkAt);
    if (tokens > 1 && seconds > 0) this.metrics.tokensPerSecond.observe(labels, tokens / seconds);
  }
}

function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}
