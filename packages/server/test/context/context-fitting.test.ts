import { CPPError, ErrorCode, type MessageNode, type ToolCall } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { ContextFitter } from '../../src/context/context-fitting.js';
import { estimateScaleOf } from '../../src/context/context-window.js';
import { ESTIMATE, type TokenizerCounter, tokenCounterFor } from '../../src/context/token-counter.js';
import {
  estimateAttachmentTokens,
  estimateTokens,
  IMAGE_TOKENS_MAX,
  MESSAGE_OVERHEAD_TOKENS,
  PDF_TOKENS_MAX,
} from '../../src/context/token-estimate.js';
import { modelMessages } from '../../src/engine/model-context.js';
import { ModelCatalog } from '../../src/model/model-catalog.js';

const noBytes = () => Promise.resolve(undefined);

let counter = 0;
function node(role: MessageNode['role'], content: string, extra: Partial<MessageNode> = {}): MessageNode {
  counter += 1;
  return {
    id: `msg_${role}${counter}`,
    parentId: null,
    childrenIds: [],
    role,
    content,
    status: 'completed',
    createdAt: counter,
    ...extra,
  };
}

/** A branch of `turns` exchanges whose every message is `words` four-letter words, then the answer being written. */
function branch(turns: number, words = 20): MessageNode[] {
  const text = 'word '.repeat(words).trim();
  const nodes: MessageNode[] = [];
  for (let turn = 0; turn < turns; turn++) nodes.push(node('user', text), node('assistant', text));
  nodes.push(node('user', text), node('assistant', '', { status: 'streaming' }));
  return nodes;
}

/** 20 words of 'word ' less the last space: 99 ASCII code units, 25 tokens, and the message's overhead. */
const MESSAGE_TOKENS = 25 + MESSAGE_OVERHEAD_TOKENS;

const window = (tokens: number, reservedOutputTokens = 0, fixedTokens = 0, estimateScale = 1) => ({
  tokens,
  reservedOutputTokens,
  fixedTokens,
  estimateScale,
  counter: ESTIMATE,
});

describe('estimateTokens', () => {
  it('counts a quarter of a token for each ASCII code unit and one for every other', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('日本語')).toBe(3);
    expect(estimateTokens('ab日本')).toBe(3);
  });
});

describe('estimateAttachmentTokens', () => {
  const file = { name: 'abcd', sha256: '0'.repeat(64) };
  it('counts an image by its pixels, a text file by its bytes, a PDF by its bytes within its bound, and the name', () => {
    expect(estimateAttachmentTokens({ ...file, mediaType: 'image/png', size: 9, width: 750, height: 2 })).toBe(1 + 2);
    expect(estimateAttachmentTokens({ ...file, mediaType: 'image/png', size: 9, width: 4000, height: 3000 })).toBe(
      1 + IMAGE_TOKENS_MAX,
    );
    expect(estimateAttachmentTokens({ ...file, mediaType: 'image/gif', size: 9 })).toBe(1 + IMAGE_TOKENS_MAX);
    expect(estimateAttachmentTokens({ ...file, mediaType: 'text/plain', size: 300 })).toBe(1 + 100);
    expect(estimateAttachmentTokens({ ...file, mediaType: 'application/pdf', size: 800 })).toBe(1 + 100);
    expect(estimateAttachmentTokens({ ...file, mediaType: 'application/pdf', size: 20 * 2 ** 20 })).toBe(
      1 + PDF_TOKENS_MAX,
    );
  });
});

describe('tokenCounterFor', () => {
  it("counts an OpenAI model's tokens with its own encoding once loaded, and every other model's by the estimate", async () => {
    expect(tokenCounterFor('openai-compatible', 'gpt-4o-mini').name).toBe('o200k_base');
    expect(tokenCounterFor('openai-compatible', 'openai/gpt-5').name).toBe('o200k_base');
    expect(tokenCounterFor('openai-compatible', 'o4-mini').name).toBe('o200k_base');
    expect(tokenCounterFor('openai-compatible', 'gpt-4-turbo').name).toBe('cl100k_base');
    expect(tokenCounterFor('openai-compatible', 'llama-3.1-70b')).toBe(ESTIMATE);
    expect(tokenCounterFor('anthropic', 'claude-sonnet-4-6')).toBe(ESTIMATE);
    expect(tokenCounterFor('ollama', 'gpt-oss')).toBe(ESTIMATE);

    // Models of one encoding share its counter, so that a branch answered by both side by side is counted once.
    expect(tokenCounterFor('openai-compatible', 'gpt-4o')).toBe(tokenCounterFor('openai-compatible', 'gpt-4.1-mini'));

    const counter = tokenCounterFor('openai-compatible', 'gpt-4o') as TokenizerCounter;
    await counter.ready;
    expect(counter.exact).toBe(true);
    // o200k_base: "hello world" is two tokens; the estimate would say 3 (11 ASCII code units).
    expect(counter.count('hello world')).toBe(2);
    expect(estimateTokens('hello world')).toBe(3);
    // Once exact, a count kept from the estimate is counted again.
    const fitter = new ContextFitter();
    const prompt = node('user', 'hello world');
    expect(fitter.tokensOf(prompt, ESTIMATE)).toBe(3 + MESSAGE_OVERHEAD_TOKENS);
    expect(fitter.tokensOf(prompt, counter)).toBe(2 + MESSAGE_OVERHEAD_TOKENS);
  });
});

describe('ContextFitter', () => {
  it('gives the whole branch, with no context recorded, when it fits', () => {
    const nodes = branch(3);
    const fitted = new ContextFitter().fit(nodes, window(8 * MESSAGE_TOKENS), 'm', noBytes);
    expect(fitted.messages).toEqual(modelMessages(nodes, noBytes));
    expect(fitted.context).toBeUndefined();
    // The streaming answer has no text yet: no message, and nothing counted for it.
    expect(fitted.tokens).toBe(7 * MESSAGE_TOKENS);
  });

  it('leaves out the oldest nodes, keeping the first prompt, and records where the rest resumes', () => {
    const nodes = branch(5); // u0 a0 u1 a1 u2 a2 u3 a3 u4 a4 u5, then the answer being written
    // Room for 7 messages: the first prompt, the turn answered (u5), and the 5 before it, from a2 on.
    const fitted = new ContextFitter().fit(nodes, window(7 * MESSAGE_TOKENS + 10, 10), 'm', noBytes);
    expect(fitted.context).toEqual({ fromNodeId: nodes[5]!.id, omittedNodes: 4 });
    expect(fitted.messages).toEqual(modelMessages([nodes[0]!, ...nodes.slice(5)], noBytes));
    expect(fitted.tokens).toBe(7 * MESSAGE_TOKENS);
  });

  it('never starts what it keeps after the first prompt with a prompt whose answer it left out', () => {
    const nodes = branch(5);
    // Room for 6 messages would keep u3 a3 u4 a4 u5; u3 would follow the first prompt without a2, so it goes too.
    const fitted = new ContextFitter().fit(nodes, window(6 * MESSAGE_TOKENS), 'm', noBytes);
    expect(fitted.context).toEqual({ fromNodeId: nodes[7]!.id, omittedNodes: 6 });
    expect(fitted.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(fitted.tokens).toBe(5 * MESSAGE_TOKENS);
  });

  it('leaves out an answer with its tool calls and their results whole', () => {
    const call: ToolCall = {
      toolCallId: 'call_1',
      toolName: 'clock',
      step: 0,
      offset: 4,
      state: 'output-available',
      input: '{}',
      output: 'word '.repeat(200),
    };
    const nodes = branch(2);
    nodes[1] = { ...nodes[1]!, toolCalls: [call] };
    const fitter = new ContextFitter();
    const withCall = fitter.tokensOf(nodes[1]!, ESTIMATE);
    expect(withCall).toBeGreaterThan(250);
    const fitted = fitter.fit(nodes, window(5 * MESSAGE_TOKENS + 20), 'm', noBytes);
    expect(fitted.context).toEqual({ fromNodeId: nodes[3]!.id, omittedNodes: 2 });
    expect(fitted.messages.some((message) => message.role === 'tool')).toBe(false);
  });

  it('leaves out a prompt with its files whole, and counts them', () => {
    const nodes = branch(2);
    const attachment = {
      id: 'att_1',
      name: 'notes.txt',
      mediaType: 'text/plain' as const,
      size: 3000,
      sha256: '0'.repeat(64),
    };
    nodes[2] = { ...nodes[2]!, attachments: [attachment] };
    const fitter = new ContextFitter();
    expect(fitter.tokensOf(nodes[2]!, ESTIMATE)).toBe(MESSAGE_TOKENS + estimateAttachmentTokens(attachment));
    const fitted = fitter.fit(nodes, window(5 * MESSAGE_TOKENS + 20), 'm', noBytes);
    expect(fitted.context).toEqual({ fromNodeId: nodes[3]!.id, omittedNodes: 2 });
    expect(fitted.messages.some((message) => message.role === 'user' && message.attachments)).toBe(false);
  });

  it('counts the window less the room for the answer and the system prompt', () => {
    const nodes = branch(3);
    const everything = 7 * MESSAGE_TOKENS;
    const fitter = new ContextFitter();
    expect(fitter.fit(nodes, window(everything), 'm', noBytes).context).toBeUndefined();
    expect(fitter.fit(nodes, window(everything + 1, 1), 'm', noBytes).context).toBeUndefined();
    expect(fitter.fit(nodes, window(everything, 1), 'm', noBytes).context).toBeDefined();
    expect(fitter.fit(nodes, window(everything, 0, 1), 'm', noBytes).context).toBeDefined();
  });

  it("scales its estimates by what the provider's counts showed them to be off by", () => {
    const nodes = branch(3);
    const fitter = new ContextFitter();
    expect(fitter.fit(nodes, window(7 * MESSAGE_TOKENS), 'm', noBytes).context).toBeUndefined();
    // The provider counted twice what was estimated: the same window holds half as much of the branch.
    const halved = fitter.fit(nodes, window(7 * MESSAGE_TOKENS, 0, 0, 2), 'm', noBytes);
    expect(halved.messages).toHaveLength(3);
    expect(halved.context).toEqual({ fromNodeId: nodes[5]!.id, omittedNodes: 4 });
    expect(estimateScaleOf(100, 150)).toBe(1.5);
    expect(estimateScaleOf(100, 1000)).toBe(4);
    expect(estimateScaleOf(100, 1)).toBe(0.25);
    expect(estimateScaleOf(100, undefined)).toBeUndefined();
    expect(estimateScaleOf(0, 10)).toBeUndefined();
  });

  it('gives a model of no known window the whole branch, and CPP_MODELS lists no window for it', () => {
    const provider = { provider: 'custom', model: 'mine', stream: () => (async function* () {})() };
    const catalog = new ModelCatalog([{ provider }, { id: 'sized', provider, contextWindow: 1000 }]);
    expect(catalog.contextWindowOf('mine')).toBeUndefined();
    expect(catalog.list().map((model) => model.contextWindow)).toEqual([undefined, 1000]);
    const nodes = branch(50);
    const fitted = new ContextFitter().fit(nodes, catalog.contextWindowOf('mine'), 'mine', noBytes);
    expect(fitted.messages).toEqual(modelMessages(nodes, noBytes));
    expect(fitted.context).toBeUndefined();
  });

  it('refuses with CONTEXT_TOO_LONG, naming the window, when the first prompt and the turn answered do not fit', () => {
    const nodes = branch(3);
    nodes[6] = node('user', 'word '.repeat(400));
    let refusal: unknown;
    try {
      new ContextFitter().fit(nodes, window(300, 100, 20), 'small', noBytes);
    } catch (error) {
      refusal = error;
    }
    expect(CPPError.isInstance(refusal) && refusal.code).toBe(ErrorCode.CONTEXT_TOO_LONG);
    expect((refusal as Error).message).toMatch(
      /model "small" reads 180 .*context window of 300 tokens, less 100 kept for its answer and 20 for its system prompt/,
    );
  });

  it('counts a node again when its text has grown (a continued answer)', () => {
    const fitter = new ContextFitter();
    const answer = node('assistant', 'abcd');
    expect(fitter.tokensOf(answer, ESTIMATE)).toBe(1 + MESSAGE_OVERHEAD_TOKENS);
    answer.content += 'efgh';
    expect(fitter.tokensOf(answer, ESTIMATE)).toBe(2 + MESSAGE_OVERHEAD_TOKENS);
  });
});
