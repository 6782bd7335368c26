import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { LogObserver } from './log-observer.js';
import { MetricsObserver } from './metrics-observer.js';
import { Observers } from './observers.js';
import type { ServerObserver } from './server-observer.js';
import type { ServerGauges } from './server-metrics.js';
import { TracingObserver } from './tracing-observer.js';

/** How a server is watched: the part of `CPPServerOptions` about logs, metrics and traces. */
export interface ObservabilityOptions {
  /** Structured logs go to this pino logger (the CLI's writes JSON lines to stdout). Default: no logs. */
  logger?: Logger;
  /** Also log prompt and answer text, for debugging. They are user data: off by default. */
  logPrompts?: boolean;
  /**
   * Prometheus metrics, served at GET /metrics. Default: a registry of the server's own, served with the process
   * metrics. A registry of yours receives the cpp_* series and is served as it is; `false` turns metrics off.
   */
  metrics?: false | Registry;
  /**
   * Where pivot and model-call spans go. Default: the OpenTelemetry API's global tracer once an SDK is registered;
   * until then no spans are made and the API is not loaded.
   */
  tracer?: Tracer;
  /** More observers of what the server does (see `ServerObserver`), called after the built-in ones. */
  observers?: ServerObserver[];
}

export interface Observability {
  observers: Observers;
  /** What GET /metrics serves; undefined when metrics are off. */
  metricsRegistry: Registry | undefined;
}

export function createObservability(options: ObservabilityOptions, gauges: ServerGauges): Observability {
  const metrics = options.metrics === false ? undefined : new MetricsObserver(gauges, options.metrics);
  const observers: ServerObserver[] = [
    ...(options.logger ? [new LogObserver(options.logger, options.logPrompts)] : []),
    ...(metrics ? [metrics] : []),
    new TracingObserver(options.tracer),
    ...(options.observers ?? []),
  ];
  return { observers: new Observers(observers), metricsRegistry: metrics?.registry };
}
