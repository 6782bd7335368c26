import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { BenchSocket } from './bench-socket.js';
import { clientFrame } from './cpp-frames.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import type { ModelServerReady } from './model-server.js';

/** Each of 3 models answering one prompt at once ÷ one model alone, time to first token (issue 38). */
const RATIO_TARGET = 1.2;
const MODELS = 3;
const PROMPT = 'What is a conversational pivot?';
/** The first token of a model that thinks as a small hosted one does, for the second pair of figures. */
const THINKING_MS = 100;

interface ModelsRun {
  /** The model server's time before each first token: 0, or `THINKING_MS`. */
  thinkingMs: number;
  /** One model answering the prompt alone. */
  alone: LatencySummary;
  /** Each answer of 3 models answering one prompt side by side: one sample per answer. */
  eachOfThree: LatencySummary;
  /** The same answers by the order their first tokens arrived in: each prompt's first, second and third. */
  byArrival: LatencySummary[];
}

/**
 * Several models per prompt (docs/PROTOCOL.md §30): time to first token (CPP_PROMPT sent → the answer's first
 * CPP_STREAM_CHUNK) of each of 3 models asked at once, against one model asked alone, taken in alternation on one
 * server. The models are three OpenAI-compatible providers of the gateway measure's local model server, which sends
 * the first token as soon as a request is read, and the following ones at the bench's pace: what the ratio shows is
 * CPP's own work for the three (the plans, fitting, three requests, three streams), not a model's.
 */
export async function measureModels(context: BenchContext): Promise<{ figures: Figure[]; details: ModelsRun[] }> {
  const instant = await measureWith(context, 0);
  const thinking = await measureWith(context, THINKING_MS);
  return {
    figures: [...modelsFigures(instant, ''), ...modelsFigures(thinking, `, first token after ${THINKING_MS} ms`)],
    details: [...instant, ...thinking],
  };
}

async function measureWith(context: BenchContext, thinkingMs: number): Promise<ModelsRun[]> {
  // The answers' following tokens come at the bench's pace (`--interval-ms`, 50 a second by default), as a hosted
  // model's do. At the model server's default of one a millisecond, the first answer's next tokens arrived while the
  // other answers' first tokens were on their way, and the model server, CPP and the client (on two cores) wrote and
  // read them in between: the model's speed after its first token, not CPP's work for three answers.
  const model = await BenchProcess.start<ModelServerReady>('./model-server.js', [
    String(thinkingMs),
    String(context.options.intervalMs),
  ]);
  const server = await context.startServer('cpp', {
    kind: 'openai-compatible',
    baseUrl: model.info.baseUrl,
    models: MODELS,
  });
  const socket = await BenchSocket.connect(server.url, CPP_SUBPROTOCOL);
  const ids = Array.from({ length: MODELS }, (_, index) => `model-${index + 1}`);
  const runs: ModelsRun[] = [];
  try {
    for (let run = 0; run < context.options.runs; run += 1) {
      context.log(`models (first token after ${thinkingMs} ms): run ${run + 1}/${context.options.runs}`);
      const alone = new LatencyRecorder();
      const eachOfThree = new LatencyRecorder();
      const byArrival = ids.map(() => new LatencyRecorder());
      // A thinking model's samples take 100 ms each: fewer of them, as many as the quick run's instant ones.
      const samples = thinkingMs > 0 ? Math.min(context.options.gatewaySamples, 60) : context.options.gatewaySamples;
      const warmUp = Math.ceil(samples / 10);
      for (let index = 0; index < warmUp + samples; index += 1) {
        const one = await firstTokens(socket, { model: ids[0]! }, 1);
        const three = await firstTokens(socket, { models: ids }, MODELS);
        if (index < warmUp) continue;
        alone.record(one[0]!);
        for (const [rank, ms] of three.entries()) {
          eachOfThree.record(ms);
          byArrival[rank]!.record(ms);
        }
      }
      runs.push({
        thinkingMs,
        alone: alone.summary(),
        eachOfThree: eachOfThree.summary(),
        byArrival: byArrival.map((recorder) => recorder.summary()),
      });
    }
  } finally {
    socket.close();
    await server.process.stop();
    await model.stop();
  }
  return runs;
}

/**
 * A prompt in a new thread, answered by `answers` models; the time from sending it to each answer's first chunk, in
 * the order they arrived, once every answer has completed.
 */
async function firstTokens(
  socket: BenchSocket,
  models: { model: string } | { models: string[] },
  answers: number,
): Promise<number[]> {
  const synced = socket.next('CPP_SYNC_GRAPH');
  socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
  const threadId = (await synced).frame.payload.threadId;
  const firstChunkAt = new Map<string, number>();
  let completed = 0;
  let done: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (done = resolve));
  socket.onFrame = (received) => {
    if (received.type === 'CPP_STREAM_CHUNK') {
      const { nodeId } = (received.frame as { payload: { nodeId: string } }).payload;
      if (!firstChunkAt.has(nodeId)) firstChunkAt.set(nodeId, received.receivedAt);
    } else if (received.type === 'CPP_STREAM_COMPLETED' && (completed += 1) === answers) done();
  };
  const sentAt = performance.now();
  socket.send(
    clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: PROMPT, newNodeId: newMessageId(), ...models }),
  );
  await allDone;
  socket.onFrame = undefined;
  socket.send(clientFrame('CPP_THREAD_CLOSE', { threadId }));
  return [...firstChunkAt.values()].map((at) => at - sentAt);
}

/**
 * The target is held by the instant model's figure, where CPP's work is all there is; the thinking model's is what a
 * person sees of it with a model that takes time to start.
 */
function modelsFigures(runs: ModelsRun[], model: string): Figure[] {
  const of = (values: (run: ModelsRun) => number) => median(runs.map(values));
  const id = model === '' ? 'models.ttft' : 'models.ttft.thinking';
  // Where the instant model's ratio comes from: the first of the three late (work done once per prompt grew with
  // the answers), or each answer after the one before (work done per answer, one after another).
  const arrivals =
    model === ''
      ? ['first', 'second', 'third'].map((rank, index) =>
          figure({
            id: `${id}.${rank}-of-3.p50`,
            label: `Time to first token p50, the ${rank} of 3 models to answer`,
            unit: 'ms',
            value: of((run) => run.byArrival[index]!.p50),
            baseline: { label: 'one model alone p50', value: of((run) => run.alone.p50) },
          }),
        )
      : [];
  return [
    figure({
      id: `${id}.each-of-3.p50`,
      label: `Time to first token p50, each of 3 models at once${model}`,
      unit: 'ms',
      value: of((run) => run.eachOfThree.p50),
      baseline: { label: 'one model alone p50', value: of((run) => run.alone.p50) },
      ...(model === '' ? { target: ratioTarget('≤', RATIO_TARGET) } : {}),
    }),
    figure({
      id: `${id}.each-of-3.p99`,
      label: `Time to first token p99, each of 3 models at once${model}`,
      unit: 'ms',
      value: of((run) => run.eachOfThree.p99),
      baseline: { label: 'one model alone p99', value: of((run) => run.alone.p99) },
    }),
    ...arrivals,
  ];
}
