import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import { ErrorCode } from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { tracingRequested } from '../../src/observability/tracing-sdk.js';
import { completion, expectError, openThread, pivot, prompt } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();
const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');

// Before, not after: a server closed after a test halts its answers, which ends their spans.
beforeEach(() => exporter.reset());

function spans(name: string): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((span) => span.name === name);
}

function only(name: string): ReadableSpan {
  const found = spans(name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

/** The finished spans whose parent is `parent`, in the order they started. */
function childrenOf(parent: ReadableSpan): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

describe('OpenTelemetry spans', () => {
  it('trace a pivot: one span, a child per step in order, the halt as an event, and the new model call under its spawn step', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' wor', 'ld', ' and', ' more'], 3, { tracer });
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead', {
      receivedContentLength: 9,
    });
    await completion(setup.client, setup.threadId, branch.assistantNodeId);

    const pivotSpan = only('cpp.pivot');
    expect(pivotSpan.kind).toBe(SpanKind.SERVER);
    expect(pivotSpan.attributes).toEqual({
      'cpp.thread_id': setup.threadId,
      'cpp.interrupted_node_id': setup.assistantNodeId,
      'cpp.new_branch_node_id': branch.userNodeId,
      'cpp.received_content_length': 9,
    });
    expect(pivotSpan.events.map((event) => event.name)).toEqual(['cpp.stream_halted']);
    const steps = childrenOf(pivotSpan);
    expect(steps.map((span) => span.name)).toEqual([
      'cpp.pivot.abort',
      'cpp.pivot.spawn',
      'cpp.pivot.commit',
      'cpp.pivot.insert',
    ]);

    const [halted, answered] = spans('chat scripted-model');
    expect(halted!.parentSpanContext).toBeUndefined();
    expect(halted!.attributes).toMatchObject({
      'cpp.node_id': setup.assistantNodeId,
      'cpp.generation.outcome': 'halted',
      'cpp.generation.chars': 'Hello world'.length,
    });
    expect(childrenOf(steps[1]!)).toEqual([answered]);
    expect(answered!.kind).toBe(SpanKind.CLIENT);
    expect(answered!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.response.finish_reasons': ['stop'],
      'cpp.thread_id': setup.threadId,
      'cpp.node_id': branch.assistantNodeId,
      'cpp.generation.outcome': 'completed',
    });
    expect(answered!.events.map((event) => event.name)).toEqual(['gen_ai.first_token']);
  });

  it('have no abort step and no halt when the pivot branches from an answer that is over', async () => {
    await fixture.start({ tracer, model: new ScriptedModel({ chunks: ['Done'] }, { gated: false }) });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const first = await prompt(client, threadId, 'Hello');
    await completion(client, threadId, first.assistantNodeId);
    const branch = await pivot(client, threadId, first.assistantNodeId, 'Elsewhere');
    await completion(client, threadId, branch.assistantNodeId);

    const pivotSpan = only('cpp.pivot');
    expect(childrenOf(pivotSpan).map((span) => span.name)).toEqual([
      'cpp.pivot.spawn',
      'cpp.pivot.commit',
      'cpp.pivot.insert',
    ]);
    expect(pivotSpan.events).toEqual([]);
  });

  it('note a refused pivot on its span without marking it failed: the client erred, not the server', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1, { tracer });
    setup.client.send('CPP_PIVOT_INIT', {
      interruptedNodeId: setup.userNodeId,
      activeThreadId: setup.threadId,
      userPrompt: 'No',
      newBranchNodeId: 'msg_refused',
    });
    await expectError(setup.client, ErrorCode.THREAD_BUSY);

    const pivotSpan = only('cpp.pivot');
    expect(pivotSpan.attributes['cpp.error_code']).toBe(ErrorCode.THREAD_BUSY);
    expect(pivotSpan.status.code).toBe(SpanStatusCode.UNSET);
    expect(childrenOf(pivotSpan)).toEqual([]);
  });

  it('mark a failed model call as an error', async () => {
    await fixture.start({
      tracer,
      model: new ScriptedModel({ chunks: ['Par'], ending: new Error('upstream broke') }, { gated: false }),
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    await prompt(client, threadId, 'Hello');
    await expectError(client, ErrorCode.PROVIDER_ERROR);

    const call = only('chat scripted-model');
    expect(call.status).toEqual({ code: SpanStatusCode.ERROR, message: 'upstream broke' });
    expect(call.attributes['cpp.generation.outcome']).toBe('failed');
    expect(call.events.map((event) => event.name)).toEqual(['gen_ai.first_token', 'exception']);
  });
});

describe('without a tracer of its own, the server', () => {
  it("traces to the SDK registered with OpenTelemetry's API, also when it is registered after the server started", async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['Untraced'] }, { gated: false }) });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    await completion(client, threadId, (await prompt(client, threadId, 'Before')).assistantNodeId);
    expect(exporter.getFinishedSpans()).toEqual([]);

    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      await completion(client, threadId, (await prompt(client, threadId, 'After')).assistantNodeId);
      expect(only('chat scripted-model').attributes['cpp.thread_id']).toBe(threadId);
    } finally {
      trace.disable();
    }
  });
});

describe('tracing from the OTEL_* environment', () => {
  it('is off by default, and on when an exporter is named or an OTLP endpoint given, unless the SDK is disabled', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'cpp' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBe(true);
    expect(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    ).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });
});
