import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { BenchSocket, type Received } from './bench-socket.js';
import { PROMPT } from './chat-request.js';
import { clientFrame } from './cpp-frames.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';
import type { ModelServerReady } from './model-server.js';
import type { RelayRequest, RelayServerReady } from './relay-server.js';

/** Each of 3 models answering one prompt at once ÷ one model alone, time to first token (issue 38). */
const RATIO_TARGET = 1.2;
const MODELS = 3;
/** The first token of a model that thinks as a small hosted one does, for the second pair of figures. */
const THINKING_MS = 100;

/** Times to first token of one server: one answer alone, and 3 at once. */
interface ModelsTimes {
  /** One model answering the prompt alone. */
  alone: LatencySummary;
  /** Each answer of 3 models answering one prompt side by side: one sample per answer. */
  eachOfThree: LatencySummary;
  /** The same answers by the order their first tokens arrived in: each prompt's first, second and third. */
  byArrival: LatencySummary[];
}

interface ModelsRun extends ModelsTimes {
  /** The model server's time before each first token: 0, or `THINKING_MS`. */
  thinkingMs: number;
  /** The bare relay's, in the same alternation (the instant model only): the machine's floor. */
  relay?: ModelsTimes;
}

/**
 * Several models per prompt (docs/PROTOCOL.md §30): time to first token (CPP_PROMPT sent → the answer's first
 * CPP_STREAM_CHUNK) of each of 3 models asked at once, against one model asked alone, taken in alternation on one
 * server. The models are three OpenAI-compatible providers of the gateway measure's local model server, which sends
 * the first token as soon as a request is read, and the following ones at the bench's pace: what the ratio shows is
 * CPP's own work for the three (the plans, fitting, three requests, three streams), not a model's. With the instant
 * model, a bare relay (relay-server.ts) is timed in the same alternation: the same requests and first tokens with
 * none of CPP's work, what three answers cost over one on this machine whatever the server.
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
  const relay =
    thinkingMs === 0
      ? await BenchProcess.start<RelayServerReady>('./relay-server.js', [model.info.baseUrl])
      : undefined;
  const relaySocket = relay && (await BenchSocket.connect(relay.info.url));
  const prompts = new CppPrompts(socket);
  const ids = Array.from({ length: MODELS }, (_, index) => `model-${index + 1}`);
  const runs: ModelsRun[] = [];
  try {
    for (let run = 0; run < context.options.runs; run += 1) {
      context.log(`models (first token after ${thinkingMs} ms): run ${run + 1}/${context.options.runs}`);
      const cpp = new TimesRecorder();
      const relayed = new TimesRecorder();
      // A thinking model's samples take 100 ms each: fewer of them, as many as the quick run's instant ones.
      const samples = thinkingMs > 0 ? Math.min(context.options.gatewaySamples, 60) : context.options.gatewaySamples;
      const warmUp = Math.ceil(samples / 10);
      for (let index = 0; index < warmUp + samples; index += 1) {
        const one = await prompts.firstTokens({ model: ids[0]! }, 1);
        const relayOne = relaySocket && (await relayFirstTokens(relaySocket, 1));
        const three = await prompts.firstTokens({ models: ids }, MODELS);
        const relayThree = relaySocket && (await relayFirstTokens(relaySocket, MODELS));
        if (index < warmUp) continue;
        cpp.record(one, three);
        if (relayOne && relayThree) relayed.record(relayOne, relayThree);
      }
      runs.push({ thinkingMs, ...cpp.summary(), ...(relaySocket ? { relay: relayed.summary() } : {}) });
    }
  } finally {
    socket.close();
    relaySocket?.close();
    await server.process.stop();
    await relay?.stop();
    await model.stop();
  }
  return runs;
}

/** One server's samples: each prompt answered alone, then by 3 models at once. */
class TimesRecorder {
  private readonly alone = new LatencyRecorder();
  private readonly eachOfThree = new LatencyRecorder();
  private readonly byArrival = Array.from({ length: MODELS }, () => new LatencyRecorder());

  record(one: number[], three: number[]): void {
    this.alone.record(one[0]!);
    for (const [rank, ms] of three.entries()) {
      this.eachOfThree.record(ms);
      this.byArrival[rank]!.record(ms);
    }
  }

  summary(): ModelsTimes {
    return {
      alone: this.alone.summary(),
      eachOfThree: this.eachOfThree.summary(),
      byArrival: this.byArrival.map((recorder) => recorder.summary()),
    };
  }
}

/**
 * Prompts, each in a new thread, timed from sending it to each answer's first chunk, in the order they arrived, once
 * every answer's end is committed (its patch has come). The thread before is closed as the next one opens: CPP has
 * nothing left to do of a sample while the relay's, between two of CPP's, is timed.
 */
class CppPrompts {
  private threadId: string | undefined;

  constructor(private readonly socket: BenchSocket) {}

  async firstTokens(models: { model: string } | { models: string[] }, answers: number): Promise<number[]> {
    const { socket } = this;
    if (this.threadId) socket.send(clientFrame('CPP_THREAD_CLOSE', { threadId: this.threadId }));
    const synced = socket.next('CPP_SYNC_GRAPH');
    socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
    const threadId = (await synced).frame.payload.threadId;
    this.threadId = threadId;
    // One patch for the prompt and its answers, then one for each answer's end.
    let patches = 0;
    return firstTokens(
      socket,
      clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: PROMPT, newNodeId: newMessageId(), ...models }),
      (received) =>
        received.type === 'CPP_STREAM_CHUNK'
          ? (received.frame as { payload: { nodeId: string } }).payload.nodeId
          : undefined,
      (received) => received.type === 'CPP_GRAPH_PATCH' && (patches += 1) === answers + 1,
    );
  }
}

/** `answers` chat completions through the bare relay, timed as CPP's prompts are. */
function relayFirstTokens(socket: BenchSocket, answers: number): Promise<number[]> {
  let firsts = 0;
  let ends = 0;
  const request: RelayRequest = { type: 'relay', payload: { answers } };
  return firstTokens(
    socket,
    request,
    (received) => (received.type === 'RELAY_FIRST' ? String((firsts += 1)) : undefined),
    (received) => received.type === 'RELAY_END' && (ends += 1) === answers,
  );
}

/**
 * Sends `frame` and times each answer's first token (the first frame `answerOf` names it in), in the order they
 * arrived, once the frame that `isLast` says is the last has come.
 */
async function firstTokens(
  socket: BenchSocket,
  frame: object,
  answerOf: (received: Received) => string | undefined,
  isLast: (received: Received) => boolean,
): Promise<number[]> {
  const firstTokenAt = new Map<string, number>();
  let done: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (done = resolve));
  socket.onFrame = (received) => {
    const answer = answerOf(received);
    if (answer !== undefined && !firstTokenAt.has(answer)) firstTokenAt.set(answer, received.receivedAt);
    else if (isLast(received)) done();
  };
  const sentAt = performance.now();
  socket.send(frame);
  await allDone;
  socket.onFrame = undefined;
  return [...firstTokenAt.values()].map((at) => at - sentAt);
}

/**
 * The target is held by the instant model's figure, where CPP's work is all there is; the thinking model's is what a
 * person sees of it with a model that takes time to start. The bare relay's, beside the instant model's, is the floor
 * of that ratio on this machine.
 */
function modelsFigures(runs: ModelsRun[], model: string): Figure[] {
  if (model !== '')
    return timesFigures(runs, { id: 'models.ttft.thinking', answers: 'models', model, arrivals: false });
  return [
    ...timesFigures(runs, { id: 'models.ttft', answers: 'models', model, target: true, arrivals: true }),
    ...timesFigures(
      runs.flatMap((run) => (run.relay ? [run.relay] : [])),
      {
        id: 'models.ttft.relay',
        answers: 'requests through a bare relay (no CPP)',
        alone: 'one request through it alone',
        model,
        arrivals: true,
      },
    ),
  ];
}

/**
 * Each of 3 against one alone, p50 and p99; with `arrivals`, the p50 of the first, second and third to arrive too:
 * where the ratio comes from, the first of the three late (work done once per prompt grew with the answers), or each
 * answer after the one before (work done per answer, one after another).
 */
function timesFigures(
  runs: ModelsTimes[],
  shown: { id: string; answers: string; alone?: string; model: string; target?: boolean; arrivals: boolean },
): Figure[] {
  const of = (values: (times: ModelsTimes) => number) => median(runs.map(values));
  const alone = shown.alone ?? 'one model alone';
  const baseline = (percentile: 'p50' | 'p99') => ({
    label: `${alone} ${percentile}`,
    value: of((times) => times.alone[percentile]),
  });
  const eachOfThree = (percentile: 'p50' | 'p99') =>
    figure({
      id: `${shown.id}.each-of-3.${percentile}`,
      label: `Time to first token ${percentile}, each of 3 ${shown.answers} at once${shown.model}`,
      unit: 'ms',
      value: of((times) => times.eachOfThree[percentile]),
      baseline: baseline(percentile),
      ...(shown.target && percentile === 'p50' ? { target: ratioTarget('≤', RATIO_TARGET) } : {}),
    });
  const arrivals = shown.arrivals
    ? ['first', 'second', 'third'].map((rank, index) =>
        figure({
          id: `${shown.id}.${rank}-of-3.p50`,
          label: `Time to first token p50, the ${rank} of 3 ${shown.answers} to answer`,
          unit: 'ms',
          value: of((times) => times.byArrival[index]!.p50),
          baseline: baseline('p50'),
        }),
      )
    : [];
  return [eachOfThree('p50'), eachOfThree('p99'), ...arrivals];
}
