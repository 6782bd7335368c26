import type { MessageNode } from '@promethea/cpp-protocol';
import type { ModelMessage, ModelProvider } from '../model/model-provider.js';
import type { FittedContext } from './context-fitting.js';

/** What a summariser is given at most of the part left out, its most recent text: about 4 characters a token. */
const CHARACTERS_PER_TOKEN = 4;

/** How long a summary may take when the server names no other limit (`summaryTimeoutMs`), in milliseconds. */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 30_000;

/**
 * Summaries of the parts of branches that a model's window leaves out (docs/PROTOCOL.md §28.5), one per branch point
 * and summarising model: the answers under one branch point (siblings, several models side by side, a pivot's new
 * branch, a regenerate) whose fitting leaves out the same nodes read the summary made for the first of them. A
 * summary that fails is not kept: that answer's model reads without one (the part is dropped), and the next one asks
 * again.
 */
export class BranchSummaries {
  /** By summarising model and the last node left out, which names the part left out: the path to it is unique. */
  private readonly summaries = new Map<string, Promise<string | undefined>>();
  /** The summarising calls under way: each is aborted by `abort`, or by its timeout. */
  private readonly calls = new Set<AbortController>();

  constructor(
    private readonly onError: (error: unknown) => void,
    /** How long a summarising call may take before it is aborted and the answer reads without it; 0: no limit. */
    private readonly timeoutMs: number = DEFAULT_SUMMARY_TIMEOUT_MS,
  ) {}

  /**
   * Aborts every summarising call under way (the answers they precede were halted, or the server shuts down): each
   * ends as a failed one does, its answer reading the branch without it. Not reported: nothing failed.
   */
  abort(): void {
    for (const call of this.calls) call.abort(new Error('the answer the summary was for was halted'));
  }

  /**
   * The summary of `omitted` (the nodes after the first prompt that `fitted` leaves out) by `summarizer`, at most
   * `tokens` long; made once per branch point. Undefined when the model failed.
   */
  summary(
    omitted: readonly MessageNode[],
    summarizer: { id: string; provider: ModelProvider },
    tokens: number,
    readable: number | undefined,
  ): Promise<string | undefined> {
    const key = `${summarizer.id}\u0000${omitted.at(-1)?.id}`;
    let summary = this.summaries.get(key);
    if (!summary) {
      const call = new AbortController();
      let timedOut = false;
      const timer =
        this.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              call.abort(new Error(`the summariser ${summarizer.id} wrote no summary within ${this.timeoutMs} ms`));
            }, this.timeoutMs)
          : undefined;
      this.calls.add(call);
      summary = untilAborted(summarise(omitted, summarizer.provider, tokens, readable, call.signal), call.signal)
        .catch((error: unknown) => {
          this.summaries.delete(key);
          if (!call.signal.aborted || timedOut) this.onError(call.signal.aborted ? call.signal.reason : error);
          return undefined;
        })
        .finally(() => {
          clearTimeout(timer);
          this.calls.delete(call);
        });
      this.summaries.set(key, summary);
    }
    return summary;
  }
}

/** `fitted` with the summary read in place of what it left out: said after the first prompt, in its message. */
export function withSummary(fitted: FittedContext, summary: string, summaryTokens: number): FittedContext {
  const [first, ...rest] = fitted.messages;
  if (!fitted.context || first?.role !== 'user') return fitted;
  const summarised: ModelMessage = {
    ...first,
    content: `${first.content}\n\n[What was said after this message and before the next is left out to fit the context window. Its summary: ${summary}]`,
  };
  return {
    ...fitted,
    messages: [summarised, ...rest],
    context: { ...fitted.context, summary },
    tokens: fitted.tokens + summaryTokens,
  };
}

async function summarise(
  omitted: readonly MessageNode[],
  provider: ModelProvider,
  tokens: number,
  readable: number | undefined,
  signal: AbortSignal,
): Promise<string> {
  const transcript = omitted
    .filter((node) => node.content !== '')
    .map((node) => `${node.role === 'user' ? 'User' : 'Assistant'}: ${node.content}`)
    .join('\n\n');
  // A part longer than the summariser reads is summarised from its most recent text.
  const shown = readable === undefined ? transcript : transcript.slice(-readable * CHARACTERS_PER_TOKEN);
  const words = Math.max(20, Math.floor(tokens * 0.7));
  const messages: ModelMessage[] = [
    {
      role: 'user',
      content: `Summarise this part of a conversation in at most ${words} words, keeping the facts, names, numbers and decisions a reader of the rest needs:\n\n${shown}`,
    },
  ];
  let text = '';
  for await (const part of provider.stream({ messages, signal })) if (part.type === 'text-delta') text += part.text;
  if (text.trim() === '') throw new Error('the model wrote an empty summary');
  return text.trim();
}

/**
 * `work`, or the reason `signal` aborts with as soon as it does: a provider that ignores its signal (a connection
 * that hangs without an answer) still lets the answer go on.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
