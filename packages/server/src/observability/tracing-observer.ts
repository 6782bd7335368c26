import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { CPPError } from '@promethea/cpp-protocol';
import type { PivotRequest } from '../engine/pivot-context.js';
import { runObserved, type Failure } from './run-observed.js';
import type { GenerationObservation, GenerationResult, GenerationStart, PivotObservation, ServerObserver } from './server-observer.js';

/**
 * OpenTelemetry spans: `cpp.pivot` per pivot, with a child span per step (`cpp.pivot.abort`, `cpp.pivot.spawn`,
 * `cpp.pivot.commit`, `cpp.pivot.insert`) and an event when CPP_STREAM_HALTED goes out; `chat <model>` per model
 * call (GenAI conventions), the child of the pivot step that started it. With the API's default tracer (no SDK
 * registered) every span is a no-op.
 */
export class TracingObserver implements ServerObserver {
  /** The span of the pivot step running in each thread: a model call started by it is its child. */
  private readonly runningSteps = new Map<string, Span>();

  constructor(private readonly tracer: Tracer) {}

  pivotStarted(pivot: PivotRequest): PivotObservation {
    const span = this.tracer.startSpan('cpp.pivot', { kind: SpanKind.SERVER, attributes: pivotAttributes(pivot) });
    const parent = trace.setSpan(context.active(), span);
    return {
      step: (name, work) => {
        const step = this.tracer.startSpan(`cpp.pivot.${name}`, {}, parent);
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
    const step = this.runningSteps.get(generation.threadId);
    const span = this.tracer.startSpan(
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
    ...(pivot.receivedContentLength === undefined ? {} : { 'cpp.received_content_length': pivot.receivedContentLength }),
  };
}

function resultAttributes({ outcome, text, chunkCount }: GenerationResult): Attributes {
  const attributes: Attributes = { 'cpp.generation.outcome': outcome.kind, 'cpp.generation.chars': text.length, 'cpp.generation.chunks': chunkCount };
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
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
  }
  span.end();
}
