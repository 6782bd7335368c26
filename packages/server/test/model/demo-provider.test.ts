import { DemoProvider, type ModelStreamPart } from '@promethea/cpp-server';
import { demoModels } from '../../src/model/demo-provider.js';
import { describe, expect, it } from 'vitest';

async function collect(
  provider: DemoProvider,
  prompt: string,
  signal = new AbortController().signal,
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of provider.stream({ messages: [{ role: 'user', content: prompt }], signal })) parts.push(part);
  return parts;
}

const text = (parts: ModelStreamPart[]) => parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');

describe('the demo model', () => {
  it('answers the same conversation with the same readable text, word by word, then finishes with usage', async () => {
    const provider = new DemoProvider({ delayMs: 0, words: 40 });
    const first = await collect(provider, 'Explain pivots');
    expect(text(first)).toBe(text(await collect(provider, 'Explain pivots')));
    expect(text(first)).toMatch(/^\(demo model, turn 1\) You said: "Explain pivots"\.\s+[A-Z]/);
    expect(text(first).split(' ')).toHaveLength(40);
    expect(first.filter((part) => part.type === 'text-delta')).toHaveLength(40);
    expect(first.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 8, outputTokens: 40 } });
    expect(text(await collect(provider, 'Something else'))).not.toBe(text(first));
  });

  it('writes, by default, a whole Markdown answer with a heading, a list, a fenced code block with its language and a table, ending at a sentence', async () => {
    const provider = new DemoProvider({ delayMs: 0 });
    const answers = await Promise.all(
      ['Explain pivots', 'How do I stream?', 'Show me around', 'Hello'].map(async (prompt) =>
        text(await collect(provider, prompt)),
      ),
    );
    for (const answer of answers) {
      expect(answer).toMatch(/^\(demo model, turn 1\) You said: "[^"]*"\./);
      expect(answer).toMatch(/\n## \S/);
      expect(answer).toMatch(/\n(- |1\. )\S/);
      expect(answer).toMatch(/\n```[a-z]+\n[\s\S]+?\n```\n/);
      expect(answer).toMatch(/\n\| --- \| --- \|/);
      expect(answer).toMatch(/[.!?]$/);
      expect(answer.split(/\s+/).length).toBeGreaterThan(80);
    }
    // Not the same answer to everything.
    expect(new Set(answers.map((answer) => answer.split('\n## ')[1]?.split('\n')[0])).size).toBeGreaterThan(1);
  });

  it('reasons first in its reasoning mode (demo-reasoning), apart from its answer, which is the same answer', async () => {
    const provider = new DemoProvider({ delayMs: 0, words: 40, reasoningWords: 12 });
    const parts = await collect(provider, 'Explain pivots');
    const reasoning = parts.filter((part) => part.type === 'reasoning-delta');
    expect(provider).toMatchObject({ model: 'demo-reasoning', reasoning: true });
    expect(reasoning).toHaveLength(12);
    expect(parts.findIndex((part) => part.type === 'text-delta')).toBe(12);
    expect(reasoning.map((part) => part.text).join('')).toMatch(/^The question is about "Explain pivots"\./);
    expect(text(parts)).toBe(text(await collect(new DemoProvider({ delayMs: 0, words: 40 }), 'Explain pivots')));
    const filesAlone = await collect(provider, ' ');
    expect(filesAlone.map((part) => (part.type === 'reasoning-delta' ? part.text : '')).join('')).toMatch(
      /^The question is about the files attached\. /,
    );
  });

  it('continues its own partial answer with the rest of it, and another text with its whole answer', async () => {
    const provider = new DemoProvider({ delayMs: 0, words: 40 });
    const whole = text(await collect(provider, 'Explain pivots'));
    const continued = async (partial: string) => {
      const parts: ModelStreamPart[] = [];
      const messages = [
        { role: 'user' as const, content: 'Explain pivots' },
        { role: 'assistant' as const, content: partial },
      ];
      for await (const part of provider.stream({ messages, continues: true, signal: new AbortController().signal }))
        parts.push(part);
      return text(parts);
    };
    expect(whole.slice(0, 30) + (await continued(whole.slice(0, 30)))).toBe(whole);
    expect(await continued('Something I said')).toBe(` ${whole}`);
  });

  it('offers cpp-demo, its reasoning mode demo-reasoning and its agent demo-tools when a server has no model', () => {
    expect(demoModels().map((entry) => [entry.provider.model, entry.provider.reasoning])).toEqual([
      ['cpp-demo', false],
      ['demo-reasoning', true],
      ['demo-tools', false],
    ]);
  });

  it('stops as soon as its signal aborts, without another word', async () => {
    const provider = new DemoProvider({ delayMs: 5, words: 1000 });
    const controller = new AbortController();
    const parts: ModelStreamPart[] = [];
    await expect(async () => {
      for await (const part of provider.stream({
        messages: [{ role: 'user', content: 'Go' }],
        signal: controller.signal,
      })) {
        parts.push(part);
        if (parts.length === 3) controller.abort();
      }
    }).rejects.toThrow();
    expect(parts).toHaveLength(3);
  });
});
