import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelProvider, ModelRequest, ModelStreamPart } from './model-provider.js';

export interface DemoProviderOptions {
  /** Pause before each word, in milliseconds. Default 40 (about 25 words a second, a typical chat model pace). */
  delayMs?: number;
  /**
   * Exactly this many words in each answer, cut wherever that falls (for tests that count). Default: one whole
   * answer of about 130 words, ending at the end of a sentence.
   */
  words?: number;
}

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
  readonly model = 'cpp-demo';
  private readonly delayMs: number;
  private readonly words: number | undefined;

  constructor(options: DemoProviderOptions = {}) {
    this.delayMs = options.delayMs ?? 40;
    this.words = options.words;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const prompt = request.messages.at(-1)?.content ?? '';
    const words = composeAnswer(prompt, request.messages.length, this.words);
    for (const [index, word] of words.entries()) {
      if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal: request.signal });
      request.signal.throwIfAborted();
      yield { type: 'text-delta', text: index === 0 ? word : ` ${word}` };
    }
    yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: countWords(request.messages.map((m) => m.content).join(' ')), outputTokens: words.length } };
  }
}

/**
 * The answer as words split at single spaces (a word may hold a line break, and indentation makes empty words), so
 * that joining them with spaces gives the Markdown back exactly.
 */
function composeAnswer(prompt: string, turn: number, length: number | undefined): string[] {
  const quoted = prompt.replace(/\s+/g, ' ').trim().slice(0, 60);
  const words = `(demo model, turn ${turn}) You said: "${quoted}".`.split(' ');
  // The same conversation always gets the same answer; different prompts get different ones.
  let answer = hash(prompt) + turn;
  const next = () => `\n\n${ANSWERS[answer++ % ANSWERS.length]!}`.split(' ');
  if (length === undefined) return [...words, ...next()];
  while (words.length < length) words.push(...next());
  return words.slice(0, Math.max(length, 1));
}

function hash(text: string): number {
  let value = 2166136261;
  for (let index = 0; index < text.length; index += 1) value = Math.imul(value ^ text.charCodeAt(index), 16777619) >>> 0;
  return value;
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
