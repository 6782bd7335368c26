import { performance } from 'node:perf_hooks';
import { CPPError, ErrorCode, type ClientFrame } from '@promethea/cpp-protocol';
import type { Logger } from 'pino';
import { ProviderError } from '../model/provider-error.js';
import { runObserved } from './run-observed.js';
import { OutageLog } from './outage-log.js';
import type {
  DependedService,
  ErrorContext,
  GenerationObservation,
  GenerationResult,
  GenerationStart,
  ObservedConnection,
  ObservedPivot,
  PivotObservation,
  PivotStep,
  SentError,
  ServerObserver,
  StoreOperationTiming,
} from './server-observer.js';

/**
 * Structured log lines of what the server does. Prompts and answers are user data: they are logged only when
 * `logPrompts` is set (for debugging); their length always is. API keys never reach an observer.
 */
export class LogObserver implements ServerObserver {
  private readonly outages: Record<DependedService, OutageLog>;

  constructor(
    private readonly logger: Logger,
    private readonly logPrompts = false,
  ) {
    this.outages = { store: new OutageLog(logger, 'store'), cluster: new OutageLog(logger, 'cluster') };
  }

  connectionOpened(connection: ObservedConnection): void {
    this.logger.info({ connectionId: connection.id, did: connection.identity.did }, 'connection opened');
  }

  connectionClosed(connection: ObservedConnection): void {
    this.logger.info({ connectionId: connection.id }, 'connection closed');
  }

  /** Prompts and pivots are what users do: info. Every other frame: debug. */
  frameReceived(connection: ObservedConnection, frame: ClientFrame): void {
    const threadId = frameThreadId(frame);
    const fields = {
      connectionId: connection.id,
      frameType: frame.type,
      threadId,
      frameId: frame.id,
    };
    if (frame.type === 'CPP_PROMPT')
      this.logger.info({ ...fields, ...this.prompt(frame.payload.userPrompt) }, 'prompt received');
    else if (frame.type === 'CPP_PIVOT_INIT')
      this.logger.info({ ...fields, ...this.prompt(frame.payload.userPrompt) }, 'pivot received');
    else this.logger.debug(fields, 'frame received');
  }

  /** A refused frame is the client's business (info); INTERNAL is the server's (error, logged with its cause). */
  errorSent(connection: ObservedConnection, { code, message, refType, refId }: SentError): void {
    const fields = {
      connectionId: connection.id,
      code,
      error: message,
      ...(refType ? { refType } : {}),
      ...(refId ? { refId } : {}),
    };
    if (code === ErrorCode.INTERNAL) this.logger.error(fields, 'error sent');
    else this.logger.info(fields, 'error sent');
  }

  pivotStarted(pivot: ObservedPivot): PivotObservation {
    const start = performance.now();
    const stepsMs: Partial<Record<PivotStep, number>> = {};
    let haltMs: number | undefined;
    const fields = {
      // Absent (undefined, which a JSON line leaves out) when another server forwarded the pivot.
      connectionId: pivot.connectionId,
      threadId: pivot.threadId,
      interruptedNodeId: pivot.interruptedNodeId,
      newBranchNodeId: pivot.newBranchNodeId,
    };
    return {
      step: (name, work) => {
        const stepStart = performance.now();
        return runObserved(work, () => (stepsMs[name] = millisecondsSince(stepStart)));
      },
      halted: () => (haltMs = millisecondsSince(start)),
      end: (error) => {
        const timings = { durationMs: millisecondsSince(start), haltMs, stepsMs };
        // A refusal has its own "error sent" line, a failure its "server error" line.
        if (error === undefined) this.logger.info({ ...fields, ...timings }, 'pivot');
        else
          this.logger.debug(
            { ...fields, ...timings, ...(CPPError.isInstance(error) ? { code: error.code } : {}) },
            'pivot not carried out',
          );
      },
    };
  }

  generationStarted(generation: GenerationStart): GenerationObservation {
    const start = performance.now();
    let firstChunkMs: number | undefined;
    const fields = {
      connectionId: generation.connectionId,
      threadId: generation.threadId,
      nodeId: generation.nodeId,
      provider: generation.provider,
      model: generation.model,
    };
    this.logger.debug({ ...fields, contextMessages: generation.contextMessages }, 'generation started');
    return {
      firstChunk: () => (firstChunkMs = millisecondsSince(start)),
      ended: (result) =>
        this.generationEnded({ ...fields, durationMs: millisecondsSince(start), firstChunkMs }, result),
    };
  }

  readinessFailed(check: string, error: unknown): void {
    this.logger.warn({ check, err: error }, 'not ready');
  }

  serverError(error: unknown, context: ErrorContext): void {
    this.logger.error({ ...context, err: error }, 'server error');
  }

  serviceUnreachable(service: DependedService, error: unknown): void {
    this.outages[service].failed(error);
  }

  serviceReachable(service: DependedService): void {
    this.outages[service].reachable();
  }

  /** A store operation that went through ends the store's outage, if there was one. */
  storeOperation({ failed }: StoreOperationTiming): void {
    if (!failed) this.outages.store.reachable();
  }

  private generationEnded(fields: Record<string, unknown>, { outcome, text, chunkCount }: GenerationResult): void {
    const answer = { chars: text.length, chunks: chunkCount, ...(this.logPrompts ? { answer: text } : {}) };
    switch (outcome.kind) {
      case 'completed':
        return this.logger.info(
          {
            ...fields,
            ...answer,
            finishReason: outcome.finishReason,
            ...(outcome.usage ? { usage: outcome.usage } : {}),
          },
          'generation completed',
        );
      case 'halted':
        return this.logger.info({ ...fields, ...answer }, 'generation halted');
      case 'failed':
        // A ProviderError's message is written to be shown (no keys, no headers); anything else is a bug to see whole.
        if (ProviderError.isInstance(outcome.error)) {
          return this.logger.warn(
            { ...fields, ...answer, error: outcome.error.message, status: outcome.error.status },
            'generation failed',
          );
        }
        return this.logger.error({ ...fields, ...answer, err: outcome.error }, 'generation failed');
    }
  }

  private prompt(text: string): Record<string, unknown> {
    return { promptChars: text.length, ...(this.logPrompts ? { prompt: text } : {}) };
  }
}

function frameThreadId(frame: ClientFrame): string | undefined {
  const payload = frame.payload;
  if ('activeThreadId' in payload) return payload.activeThreadId;
  if ('threadId' in payload) return payload.threadId;
  return undefined;
}

function millisecondsSince(start: number): number {
  return Math.round((performance.now() - start) * 10) / 10;
}
