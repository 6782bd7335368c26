import { setTimeout as sleep } from 'node:timers/promises';
import { ESTIMATE, messageTokens } from '../context/token-counter.js';
import { DemoToolsProvider } from './demo-tools-provider.js';
import type { ModelEntry } from './model-catalog.js';
import { describeFile } from './attachments-as-text.js';
import type { ModelAttachment, ModelMessage, ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

export interface DemoProviderOptions {
  /** Pause before each word, in milliseconds. Default 40 (about 25 words a second, a typical chat model pace). */
  delayMs?: number;
  /**
   * Exactly this many words in each answer, cut wherever that falls (for tests that count). Default: one whole
   * answer of about 130 words, ending at the end of a sentence.
   */
  words?: number;
  /** The model name it lists and records on each answer. Default: `cpp-demo`, or `demo-reasoning` when it reasons. */
  model?: string;
  /**
   * Reason in this many words before each answer (streamed apart from it, and pivotable). Default 0: none, except
   * for the model `demo-reasoning`, which reasons in DEMO_REASONING_WORDS.
   */
  reasoningWords?: number;
}

/** The demo's reasoning model: what `demoModels()` offers beside `cpp-demo`, and what a models file may name. */
export const DEMO_REASONING_MODEL = 'demo-reasoning';
/** How long the demo's reasoning model reasons before each answer, in words. */
export const DEMO_REASONING_WORDS = 40;

/**
 * What the demo model writes after quoting the prompt: Markdown of the kinds a real model writes (a heading, a
 * list, a fenced code block with its language, a table, a little math), so that a first look at the UI shows what
 * it can render. Each opens with plain sentences, and ends with one.
 */
const ANSWERS = [
  `A conversation here is a tree, not a line. Every pivot starts a new branch and keeps the words already said.

## How a pivot works

1. You send a message while the answer streams.
2. The server stops the model at the characters you saw.
3. Your message branches from that cut, and a new answer starts.

\`\`\`ts
const branch = await client.pivot({
  userPrompt: 'Shorter, please',
  receivedContentLength: shown.length,
});
\`\`\`

| Action | What happens |
| --- | --- |
| Pivot | the answer stops, and a branch starts |
| Anchor | the next prompt grows from an older message |
| Regenerate | a new answer goes beside this one |

After $n$ pivots a thread has $n + 1$ branches. The model only sees the branch it answers: the path from the root to your prompt. This is the demo model: configure a real one to get real answers.`,
  `Streaming lets you read an answer while it is written. You can change direction at any moment, and nothing already said is lost.

## Three ways to stream text

- **WebSockets** carry frames both ways on one connection.
- **Server-sent events** push text one way over plain HTTP.
- **Long polling** asks again each time an answer arrives.

\`\`\`python
async for chunk in client.stream("Tell me about rivers"):
    print(chunk.delta, end="", flush=True)
\`\`\`

| Transport | Both ways | Reconnects by itself |
| --- | --- | --- |
| WebSocket | yes | no |
| Server-sent events | no | yes |
| Long polling | no | yes |

Every client holds an exact copy of the tree, on connect and after every change. This is the demo model: configure a real one to get real answers.`,
  `Anchoring an older message moves the head back, so the next question branches from there. The tree keeps every branch, and the arrows above a message switch between them.

## Try it yourself

- Ask a question and let the answer stream.
- Type a new message before it ends: that is a pivot.
- Open the tree to see both branches side by side.

\`\`\`bash
npm start
# then open http://localhost:8080
\`\`\`

| Key | What it does |
| --- | --- |
| Enter | sends, or pivots while an answer streams |
| Esc | stops the answer |
| / | brings the focus back to the message box |

> The head marks where the next prompt grows from.

This is the demo model: configure a real one to get real answers.`,
];

/**
 * A deterministic stand-in for a language model, used when no model is configured: it streams readable Markdown
 * at a steady pace, and the same conversation always gets the same answer, which makes pivots easy to test and demo.
 */
export class DemoProvider implements ModelProvider {
  readonly provider = 'demo';
  readonly model: string;
  readonly reasoning: boolean;
  /** It describes the files a prompt carries, so that attachments work offline end to end. */
  readonly readsAttachments = true;
  private readonly delayMs: number;
  private readonly words: number | undefined;
  private readonly reasoningWords: number;

  constructor(options: DemoProviderOptions = {}) {
    this.delayMs = options.delayMs ?? 40;
    this.words = options.words;
    this.reasoningWords = options.reasoningWords ?? (options.model === DEMO_REASONING_MODEL ? DEMO_REASONING_WORDS : 0);
    this.reasoning = this.reasoningWords > 0;
    this.model = options.model ?? (this.reasoning ? DEMO_REASONING_MODEL : 'cpp-demo');
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const { prompt, turn, partial, attachments } = demoTurn(request);
    const words = composeAnswer(prompt, turn, this.words, await describeAttachments(attachments));
    for (const [index, word] of composeReasoning(prompt, this.reasoningWords).entries()) {
      await this.pace(request.signal);
      yield { type: 'reasoning-delta', text: index === 0 ? word : ` ${word}` };
    }
    for (const delta of continuationOf(words, partial)) {
      await this.pace(request.signal);
      yield { type: 'text-delta', text: delta };
    }
    yield {
      type: 'finish',
      finishReason: 'stop',
      // It has no tokenizer: it counts its context as the server's estimate does (docs/PROTOCOL.md §28.2), so that its
      // usage, which corrects the estimate, leaves its window as configured.
      usage: {
        inputTokens: request.messages.reduce((sum, message) => sum + messageTokens(message, ESTIMATE), 0),
        outputTokens: words.length,
      },
    };
  }

  private async pace(signal: AbortSignal): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal });
    signal.throwIfAborted();
  }
}

/**
 * The demo models a server offers when none is configured: `cpp-demo`, the default; `demo-reasoning`, which
 * reasons before it answers (its reasoning streams apart from its answer, and can be pivoted); and `demo-tools`, an
 * agent that calls the server's demo tools (`demoTools()`), one of them slow enough to pivot while it runs.
 */
export function demoModels(options: Omit<DemoProviderOptions, 'model' | 'reasoningWords'> = {}): ModelEntry[] {
  return [
    { provider: new DemoProvider(options), label: 'Demo' },
    { provider: new DemoProvider({ ...options, model: DEMO_REASONING_MODEL }), label: 'Demo (reasoning)' },
    { provider: new DemoToolsProvider({ delayMs: options.delayMs }), label: 'Demo (tools)' },
  ];
}

/**
 * The prompt a request answers, its turn, and, when it continues a partial answer (CPP_CONTINUE), that answer's text:
 * the same conversation's turn then has the partial answer after the prompt.
 */
function demoTurn(request: ModelRequest): {
  prompt: string;
  turn: number;
  partial: string;
  attachments: readonly ModelAttachment[];
} {
  const { messages } = request;
  const filesOf = (message: ModelMessage | undefined) => (message?.role === 'user' && message.attachments) || [];
  if (!request.continues) {
    const last = messages.at(-1);
    return { prompt: last?.content ?? '', turn: messages.length, partial: '', attachments: filesOf(last) };
  }
  const prompt = messages.at(-2);
  return {
    prompt: prompt?.content ?? '',
    turn: messages.length - 1,
    partial: messages.at(-1)?.content ?? '',
    attachments: filesOf(prompt),
  };
}

/** How many lines of a text file the demo quotes, and how much of each. */
const QUOTED_LINES = 3;
const QUOTED_LINE_LENGTH = 80;

/**
 * What the demo says it received, e.g. `You attached the image "cat.png" (image/png, 640×480 pixels, 12.0 KB).`; a text
 * file's first lines are quoted. Empty without files.
 */
async function describeAttachments(files: readonly ModelAttachment[]): Promise<string> {
  if (files.length === 0) return '';
  const described = await Promise.all(
    files.map(async (file) => {
      if (file.mediaType !== 'text/plain') return describeFile(file);
      const lines = new TextDecoder()
        .decode(await file.bytes())
        .split(/\r?\n/)
        .filter((line) => line.trim() !== '')
        .slice(0, QUOTED_LINES)
        .map((line) => line.trim().slice(0, QUOTED_LINE_LENGTH));
      return `${describeFile(file)}, which begins: "${lines.join(' / ')}"`;
    }),
  );
  return `You attached ${described.join('; ')}.`;
}

/**
 * The deltas of an answer of `words` after `partial`: the rest of it, word by word, when the partial text is its
 * beginning (the demo model continues its own answer as it would have gone on); the whole answer otherwise.
 */
function continuationOf(words: readonly string[], partial: string): string[] {
  const answer = words.join(' ');
  const rest = answer.startsWith(partial) ? answer.slice(partial.length) : `${partial ? ' ' : ''}${answer}`;
  // Split at spaces only: a word of the Markdown may hold a line break (see composeAnswer).
  return rest.match(/ *[^ ]+/g) ?? [];
}

const REASONING = [
  'The question is about {prompt}.',
  'First, recall what this branch of the conversation has said so far.',
  'Then choose the sentences that answer it, in a sensible order.',
  'Keep the answer short and plain.',
  'A pivot right now would keep this reasoning as far as it was shown, and no answer.',
];

/** What the reasoning mode thinks before an answer: `length` words, the prompt quoted in the first sentence. */
function composeReasoning(prompt: string, length: number): string[] {
  if (length === 0) return [];
  const quoted = prompt.replace(/\s+/g, ' ').trim().slice(0, 60);
  // A prompt of files alone (docs/PROTOCOL.md §6.5) has no words to quote.
  const subject = quoted ? `"${quoted}"` : 'the files attached';
  const words: string[] = [];
  for (let sentence = 0; words.length < length; sentence += 1)
    words.push(...REASONING[sentence % REASONING.length]!.replace('{prompt}', subject).split(' '));
  return words.slice(0, length);
}

/**
 * The answer as words split at single spaces (a word may hold a line break, and indentation makes empty words), so
 * that joining them with spaces gives the Markdown back exactly.
 */
function composeAnswer(prompt: string, turn: number, length: number | undefined, attached: string): string[] {
  const quoted = prompt.replace(/\s+/g, ' ').trim().slice(0, 60);
  // A prompt of files alone (docs/PROTOCOL.md §6.5) said nothing to quote: the files are what the answer describes.
  const opening = quoted ? `(demo model, turn ${turn}) You said: "${quoted}".` : `(demo model, turn ${turn})`;
  const words = (attached ? `${opening} ${attached.replace(/\s+/g, ' ')}` : opening).split(' ');
  // The same conversation always gets the same answer; different prompts get different ones.
  let answer = hash(prompt) + turn;
  const next = () => `\n\n${ANSWERS[answer++ % ANSWERS.length]!}`.split(' ');
  if (length === undefined) return [...words, ...next()];
  while (words.length < length) words.push(...next());
  return words.slice(0, Math.max(length, 1));
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index += 1)
    value = Math.imul(value ^ text.charCodeAt(index), 16777619) >>> 0;
  return value;
}
