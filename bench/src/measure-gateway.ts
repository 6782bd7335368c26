import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { BenchSocket } from './bench-socket.js';
import { postChatCompletion, PROMPT } from './chat-request.js';
import { clientFrame } from './cpp-frames.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import type { ModelServerReady } from './model-server.js';

/** The overhead ÷ the direct time to first token. */
const OVERHEAD_RATIO_TARGET = 0.5;

interface GatewayRun {
  direct: LatencySummary;
  cpp: LatencySummary;
}

/**
 * Measure 2: time to first token through CPP (CPP_PROMPT sent → first CPP_STREAM_CHUNK) against time to first
 * token straight from the same local OpenAI-compatible server (request sent → first content event), taken in
 * alternation so that both see the same machine.
 */
export async function measureGateway(context: BenchContext): Promise<{ figures: Figure[]; details: GatewayRun[] }> {
  const model = await BenchProcess.start<ModelServerReady>('./model-server.js', []);
  const server = await context.startServer('cpp', { kind: 'openai-compatible', baseUrl: model.info.baseUrl });
  const socket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL);
  const runs: GatewayRun[] = [];
  try {
    for (let run = 0; run < context.options.runs; run += 1) {
      context.log(`gateway: run ${run + 1}/${context.options.runs}`);
      const direct = new LatencyRecorder();
      const cpp = new LatencyRecorder();
      const warmUp = Math.ceil(context.options.gatewaySamples / 10);
      for (let index = 0; index < warmUp + context.options.gatewaySamples; index += 1) {
        const directMs = await directFirstToken(model.info.baseUrl);
        const cppMs = await cppFirstToken(socket);
        if (index < warmUp) continue;
        direct.record(directMs);
        cpp.record(cppMs);
      }
      runs.push({ direct: direct.summary(), cpp: cpp.summary() });
    }
  } finally {
    socket.close();
    await server.process.stop();
    await model.stop();
  }
  return { figures: gatewayFigures(runs), details: runs };
}

/** The request the CPP provider sends, timed to the first content event. A slower client here would flatter CPP's overhead. */
async function directFirstToken(baseUrl: string): Promise<number> {
  const sentAt = performance.now();
  const response = await postChatCompletion(baseUrl);
  response.setEncoding('utf8');
  let firstTokenAt: number | undefined;
  for await (const text of response as AsyncIterable<string>) {
    if (firstTokenAt === undefined && text.includes('"content":')) firstTokenAt = performance.now();
  }
  if (firstTokenAt === undefined) throw new Error('the model server sent no content');
  return firstTokenAt - sentAt;
}

/** A prompt in a new thread (a one-message context, as the direct request), timed to its first chunk. */
async function cppFirstToken(socket: BenchSocket): Promise<number> {
  const synced = socket.next('CPP_SYNC_GRAPH');
  socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
  const threadId = (await synced).frame.payload.threadId;
  const firstChunk = socket.next('CPP_STREAM_CHUNK');
  const completed = socket.next('CPP_STREAM_COMPLETED');
  const sentAt = performance.now();
  socket.send(clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: PROMPT, newNodeId: newMessageId() }));
  const { receivedAt } = await firstChunk;
  await completed;
  socket.send(clientFrame('CPP_THREAD_CLOSE', { threadId }));
  return receivedAt - sentAt;
}

function gatewayFigures(runs: GatewayRun[]): Figure[] {
  const of = (values: (run: GatewayRun) => number) => median(runs.map(values));
  const overheadP50 = of((run) => run.cpp.p50 - run.direct.p50);
  const overheadP99 = of((run) => run.cpp.p99 - run.direct.p99);
  return [
    figure({
      id: 'gateway.ttft.p50',
      label: 'Time to first token p50',
      unit: 'ms',
      value: of((run) => run.cpp.p50),
      baseline: { label: 'direct p50', value: of((run) => run.direct.p50) },
    }),
    figure({
      id: 'gateway.ttft.p99',
      label: 'Time to first token p99',
      unit: 'ms',
      value: of((run) => run.cpp.p99),
      baseline: { label: 'direct p99', value: of((run) => run.direct.p99) },
    }),
    figure({
      id: 'gateway.overhead.p50',
      label: 'Gateway overhead p50 (CPP − direct)',
      unit: 'ms',
      value: overheadP50,
      baseline: { label: 'direct p50', value: of((run) => run.direct.p50) },
      target: ratioTarget('≤', OVERHEAD_RATIO_TARGET),
    }),
    figure({
      id: 'gateway.overhead.p99',
      label: 'Gateway overhead p99 (CPP − direct)',
      unit: 'ms',
      value: overheadP99,
      baseline: { label: 'direct p99', value: of((run) => run.direct.p99) },
    }),
  ];
}
