import type { MessageNode } from '@promethea/cpp-protocol';
import { ContextFitter } from '../../packages/server/dist/context/context-fitting.js';
import { ESTIMATE, TokenizerCounter } from '../../packages/server/dist/context/token-counter.js';
import { modelMessages } from '../../packages/server/dist/engine/model-context.js';
import type { BenchContext } from './bench-context.js';
import { figure, valueTarget, type Figure } from './figure.js';
import { LatencyRecorder, type LatencySummary } from './latency-recorder.js';

/** The bound: counting and fitting happen before every model call, so they must stay out of the way. */
const FIT_TARGET_MS = 5;
const BRANCH_NODES = 2000;
/** A prompt of a few sentences and an answer of a few paragraphs: 1.2 MB of text over the branch. */
const PROMPT_CHARS = 200;
const ANSWER_CHARS = 1000;
/** A window of GPT-4o's size: the branch is about 300,000 tokens, so most of it is left out. */
const WINDOW = { tokens: 128_000, reservedOutputTokens: 4096, fixedTokens: 0, estimateScale: 1, counter: ESTIMATE };
const SAMPLES = 101;

interface ContextDetails {
  nodes: number;
  /** Every node counted: the first prompt in a thread just loaded. */
  cold: LatencySummary;
  /** The nodes counted before, as the engine keeps them: every later prompt in the thread. */
  warm: LatencySummary;
  /** The branch made into model messages, unfitted: what every prompt paid before context windows. */
  unfitted: LatencySummary;
  /** Every node counted by OpenAI's o200k_base tokenizer (an OpenAI model), rather than the estimate. */
  tokenizerCold: LatencySummary;
  omittedNodes: number;
}

/**
 * Measure 7: counting the tokens of a 2,000-node branch and fitting it to a model's window, in process, as the engine
 * does before each answer's model call. Its baseline is making the same branch into model messages without fitting.
 */
export async function measureContext(context: BenchContext): Promise<{ figures: Figure[]; details: ContextDetails }> {
  context.log(`context: fitting a ${BRANCH_NODES}-node branch`);
  const [cold, warm, unfitted] = [new LatencyRecorder(), new LatencyRecorder(), new LatencyRecorder()];
  const warmFitter = new ContextFitter();
  const readBytes = () => Promise.resolve(undefined);
  const tokenizer = new TokenizerCounter('o200k_base');
  await tokenizer.ready;
  const tokenizerWindow = { ...WINDOW, counter: tokenizer };
  const tokenizerCold = new LatencyRecorder();
  let omittedNodes = 0;
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    // A new branch each sample (fresh strings and nodes), as a thread loaded from the store has.
    const nodes = branch(sample);
    cold.record(time(() => new ContextFitter().fit(nodes, WINDOW, 'bench', readBytes)));
    warmFitter.fit(nodes, WINDOW, 'bench', readBytes);
    warm.record(time(() => warmFitter.fit(nodes, WINDOW, 'bench', readBytes)));
    unfitted.record(time(() => modelMessages(nodes, readBytes)));
    if (sample % 10 === 0)
      tokenizerCold.record(time(() => new ContextFitter().fit(nodes, tokenizerWindow, 'bench', readBytes)));
    omittedNodes = warmFitter.fit(nodes, WINDOW, 'bench', readBytes).context?.omittedNodes ?? 0;
  }
  const details = {
    nodes: BRANCH_NODES,
    cold: cold.summary(),
    warm: warm.summary(),
    unfitted: unfitted.summary(),
    tokenizerCold: tokenizerCold.summary(),
    omittedNodes,
  };
  const baseline = { label: 'the branch as model messages, unfitted', value: details.unfitted.p50 };
  const target = valueTarget('≤', FIT_TARGET_MS, `≤ ${FIT_TARGET_MS} ms`);
  return {
    figures: [
      figure({
        id: 'context.fit.cold.p50',
        label: `count and fit a ${BRANCH_NODES}-node branch, every node counted, p50`,
        unit: 'ms',
        value: details.cold.p50,
        baseline,
        target,
      }),
      figure({
        id: 'context.fit.warm.p50',
        label: `count and fit a ${BRANCH_NODES}-node branch, counts kept, p50`,
        unit: 'ms',
        value: details.warm.p50,
        baseline,
        target,
      }),
      // An OpenAI model's first prompt after its thread is loaded; its later prompts find the counts kept, as above.
      figure({
        id: 'context.fit.tokenizer.cold.p50',
        label: `count with o200k_base and fit a ${BRANCH_NODES}-node branch, every node counted, p50`,
        unit: 'ms',
        value: details.tokenizerCold.p50,
        baseline,
      }),
    ],
    details,
  };
}

function time(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

function branch(seed: number): MessageNode[] {
  const nodes: MessageNode[] = [];
  for (let index = 0; index < BRANCH_NODES; index += 1) {
    const role = index % 2 === 0 ? 'user' : 'assistant';
    const streaming = index === BRANCH_NODES - 1;
    const length = role === 'user' ? PROMPT_CHARS : ANSWER_CHARS;
    nodes.push({
      id: `msg_${seed}x${index}`,
      parentId: index === 0 ? null : `msg_${seed}x${index - 1}`,
      childrenIds: [],
      role,
      content: streaming ? '' : `${seed} ${index} `.concat('lorem ipsum dolor sit amet '.repeat(length / 27)),
      status: streaming ? 'streaming' : 'completed',
      createdAt: index,
    });
  }
  return nodes;
}
