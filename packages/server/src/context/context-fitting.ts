import { type AnswerContext, CPPError, ErrorCode, type MessageNode } from '@promethea/cpp-protocol';
import { modelMessages, type ReadAttachmentBytes } from '../engine/model-context.js';
import type { ModelMessage } from '../model/model-provider.js';
import type { ContextWindow } from './context-window.js';
import { messageTokens, type TokenCounter } from './token-counter.js';
import { MESSAGE_OVERHEAD_TOKENS } from './token-estimate.js';

/** The context a model is given, fitted to its window, and what of the branch it left out. */
export interface FittedContext {
  messages: ModelMessage[];
  /** Absent when the model reads the whole branch. */
  context?: AnswerContext;
  /** The tokens of `messages` as counted for the model's window (0 for a model without one). */
  tokens: number;
  /** The nodes left out, between the first prompt and `context.fromNodeId`; absent when none was. */
  omitted?: MessageNode[];
}

/** A node's tokens, kept with the text they were counted on (a streaming node's text grows) and how. */
interface Counted {
  length: number;
  toolCalls: MessageNode['toolCalls'];
  exact: boolean;
  tokens: number;
}

/**
 * Counts the tokens of a branch's nodes as the model is given them, each node counted once while its text stays the
 * same (a branch's nodes are counted again on every prompt under it), and fits a branch to a model's window.
 */
export class ContextFitter {
  /** Per counter: models of one tokenizer share their counts. */
  private readonly counted = new Map<TokenCounter, WeakMap<MessageNode, Counted>>();

  /**
   * The context of the branch ending in the answer being written (docs/PROTOCOL.md §28.3): the whole branch when it
   * fits in the window less the answer's room and the system prompt; else the first prompt, then the rest of the
   * branch from as far back as fits, the oldest nodes left out first, whole (an answer with its tool calls and their
   * results), and never so that a prompt follows the first prompt with its answer left out. The turn being answered
   * (from the last user node on) is always kept; when it and the first prompt do not fit, CONTEXT_TOO_LONG.
   */
  fit(
    branch: readonly MessageNode[],
    window: ContextWindow | undefined,
    modelId: string,
    readBytes: ReadAttachmentBytes,
    /** Kept, when the branch does not fit whole, for a summary of what is left out (docs/PROTOCOL.md §28.5). */
    summaryTokens = 0,
  ): FittedContext {
    // A model of no known window is given the whole branch, uncounted.
    if (!window) return { messages: modelMessages(branch, readBytes), tokens: 0 };
    const tokens = branch.map((node) => this.tokensOf(node, window.counter));
    const total = tokens.reduce((sum, count) => sum + count, 0);
    const whole = (window.tokens - window.reservedOutputTokens) / window.estimateScale - window.fixedTokens;
    if (total <= whole) return { messages: modelMessages(branch, readBytes), tokens: total };
    const budget = whole - summaryTokens;
    const turnStart = Math.max(1, lastUserIndex(branch));
    let kept = tokens[0]! + tokens.slice(turnStart).reduce((sum, count) => sum + count, 0);
    if (kept > budget) throw tooLong(kept, window, modelId);
    // From the turn being answered back, as far as fits.
    let from = turnStart;
    while (from > 1 && kept + tokens[from - 1]! <= budget) kept += tokens[--from]!;
    while (from < turnStart && branch[from]!.role === 'user') kept -= tokens[from++]!;
    const fitted = [branch[0]!, ...branch.slice(from)];
    return {
      messages: modelMessages(fitted, readBytes),
      context: { fromNodeId: branch[from]!.id, omittedNodes: from - 1 },
      tokens: kept,
      omitted: branch.slice(1, from),
    };
  }

  /** The tokens of one node as the model is given it, counted by `counter`. */
  tokensOf(node: MessageNode, counter: TokenCounter): number {
    let counts = this.counted.get(counter);
    if (!counts) this.counted.set(counter, (counts = new WeakMap()));
    const counted = counts.get(node);
    const { exact } = counter;
    if (counted?.length === node.content.length && counted.toolCalls === node.toolCalls && counted.exact === exact)
      return counted.tokens;
    const tokens = plainText(node)
      ? // What modelMessages makes of a node of text alone, without making it: one message, none for an empty answer.
        node.content.length > 0 || node.role === 'user'
        ? MESSAGE_OVERHEAD_TOKENS + counter.count(node.content)
        : 0
      : modelMessages([node], unread).reduce((sum, message) => sum + messageTokens(message, counter), 0);
    counts.set(node, { length: node.content.length, toolCalls: node.toolCalls, exact, tokens });
    return tokens;
  }
}

/** A node that is its text alone: no files, no tool calls. Most are. */
function plainText(node: MessageNode): boolean {
  return !node.attachments?.length && !node.toolCalls?.length;
}

/** Counting reads what a node says of its files, never their bytes. */
const unread: ReadAttachmentBytes = () => Promise.resolve(undefined);

function lastUserIndex(branch: readonly MessageNode[]): number {
  for (let index = branch.length - 1; index >= 0; index--) if (branch[index]!.role === 'user') return index;
  return 0;
}

function tooLong(needed: number, window: ContextWindow, modelId: string): CPPError {
  const { estimateScale: scale } = window;
  const system = Math.ceil(window.fixedTokens * scale);
  const room = window.tokens - window.reservedOutputTokens - system;
  return new CPPError(
    ErrorCode.CONTEXT_TOO_LONG,
    `the prompt needs about ${Math.ceil(needed * scale)} tokens with the thread's first prompt, and model ` +
      `"${modelId}" reads ${room} (its context window of ${window.tokens} tokens, less ` +
      `${window.reservedOutputTokens} kept for its answer${system > 0 ? ` and ${system} for its system prompt` : ''})`,
  );
}
