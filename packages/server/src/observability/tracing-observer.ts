import { createRequire } from 'node:module';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import { CPPError } from '@promethea/cpp-protocol';
import type { PivotRequest } from '../engine/pivot-context.js';
import { runObserved, type Failure } from './run-observed.js';
import type {
  GenerationObservation,
  GenerationResult,
  GenerationStart,
  PivotObservation,
  ServerObserver,
} from './server-observer.js';

type OpenTelemetryApi = typeof import('@opentelemetry/api');

let loadedApi: OpenTelemetryApi | undefined;

/** The OpenTelemetry API, loaded when there is a span to make (it is CommonJS: `require` loads it in time). */
function openTelemetry(): OpenTelemetryApi {
  return (loadedApi ??= createRequire(import.meta.url)('@opentelemetry/api') as OpenTelemetryApi);
}

/**
 * Whether an OpenTelemetry SDK registered its tracer provider with the API. The API (1.x, whichever copy) keeps
 * what was registered in this global; reading it spares a server nobody traces from loading the API.
 */
function tracerProviderRegistered(): boolean {
  return (
    (globalThis as { [key: symbol]: { trace?: unknown } | undefined })[Symbol.for('opentelemetry.js.api.1')]?.trace !==
    undefined
  );
}

const UNTRACED_PIVOT: PivotObservation = { step: (_name, work) => work(), halted: () => {}, end: () => {} };
const UNTRACED_GENERATION: GenerationObservation = { firstChunk: () => {}, ended: () => {} };

/**
 * OpenTelemetry spans: `cpp.pivot` per pivot, with a child span per step (`cpp.pivot.abort`, `cpp.pivot.spawn`,
 * `cpp.pivot.commit`, `cpp.pivot.insert`) and an event when CPP_STREAM_HALTED goes out; `chat <model>` per model
 * call (GenAI conventions), the child of the pivot step that started it. They go to the tracer given, else to the
 * API's global tracer once an SDK is registered (before or after the server started); until then nothing is traced
 * and the API is not loaded.
 */
export class TracingObserver implements ServerObserver {
  /** The span of the pivot step running in each thread: a model call started by it is its child. */
  private readonly runningSteps = new Map<string, Span>();

  constructor(private readonly givenTracer?: Tracer) {}

  private tracer(): Tracer | undefined {
    if (this.givenTracer) return this.givenTracer;
    return tracerProviderRegistered() ? openTelemetry().trace.getTracer('@promethea/cpp-server') : undefined;
  }

  pivotStarted(pivot: PivotRequest): PivotObservation {
    const tracer = this.tracer();
    if (!tracer) return UNTRACED_PIVOT;
    const { SpanKind, context, trace } = openTelemetry();
    const span = tracer.startSpan('cpp.pivot', { kind: SpanKind.SERVER, attributes: pivotAttributes(pivot) });
    const parent = trace.setSpan(context.active(), span);
    return {
      step: (name, work) => {
        const step = tracer.startSpan(`cpp.pivot.${name}`, {}, parent);
        this.runningSteps.set(pivot.threadId, step);
        return runObserved(work, (failure) => {
          if (this.runningSteps.get(pivot.threadId) === step) this.runningSteps.delete(pivot.threadId);
          endSpan(step, failure);
        });
      },
      halted: () => span.addEvent('cpp.stream_halted'),
      end: (error) => endSpan(span, error === undefined ? undefined : { error }),
    };
  }

  generationStarted(generation: GenerationStart): GenerationObservation {
    const tracer = this.tracer();
    if (!tracer) return UNTRACED_GENERATION;
    const { SpanKind, context, trace } = openTelemetry();
    const step = this.runningSteps.get(generation.threadId);
    const span = tracer.startSpan(
      `chat ${generation.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': generation.provider,
          'gen_ai.request.model': generation.model,
          'cpp.thread_id': generation.threadId,
          'cpp.node_id': generation.nodeId,
        },
      },
      step ? trace.setSpan(context.active(), step) : undefined,
    );
    return {
      firstChunk: () => span.addEvent('gen_ai.first_token'),
      ended: (result) => {
        span.setAttributes(resultAttributes(result));
        endSpan(span, result.outcome.kind === 'failed' ? { error: result.outcome.error } : undefined);
      },
    };
  }
}

function pivotAttributes(pivot: PivotRequest): Attributes {
  return {
    'cpp.thread_id': pivot.threadId,
    'cpp.interrupted_node_id': pivot.interruptedNodeId,
    'cpp.new_branch_node_id': pivot.newBranchNodeId,
    ...(pivot.receivedContentLength === undefined
      ? {}
      : { 'cpp.received_content_length': pivot.receivedContentLength }),
  };
}

function resultAttributes({ outcome, text, chunkCount }: GenerationResult): Attributes {
  const attributes: Attributes = {
    'cpp.generation.outcome': outcome.kind,
    'cpp.generation.chars': text.length,
    'cpp.generation.chunks': chunkCount,
  };
  if (outcome.kind !== 'completed') return attributes;
  attributes['gen_ai.response.finish_reasons'] = [outcome.finishReason];
  if (outcome.usage?.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = outcome.usage.inputTokens;
  if (outcome.usage?.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = outcome.usage.outputTokens;
  return attributes;
}

/** A refusal (a CPPError: the client's mistake) is noted on the span; anything else marks it failed. */
function endSpan(span: Span, failure: Failure): void {
  if (failure) {
    const { error } = failure;
    if (CPPError.isInstance(error)) span.setAttribute('cpp.error_code', error.code);
    else {
      if (error instanceof Error) span.recordException(error);
      span.setStatus({
        code: openTelemetry().SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  span.end();
}
