import { DemoProvider } from '@promethea/cpp-server';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './support/accessibility.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('a branch longer than the model reads', () => {
  it(
    'dims the messages the latest answer was written without, under a rule above the first it read again',
    async () => {
      // Room for 330 tokens: the first prompt and a 300-token prompt fit, an answer beside them does not.
      const harness = await WebHarness.start({
        models: [
          { provider: new DemoProvider({ delayMs: 0, words: 20 }), contextWindow: 430, reservedOutputTokens: 100 },
        ],
      });
      const chat = await harness.openChat();
      await chat.send('first');
      const first = await chat.waitForAnswer('completed');
      await chat.send('lorem '.repeat(200).trim());
      const second = await chat.waitForAnswer('completed', { otherThan: first.id });
      // Its model read the first prompt and this one, without the answer between: that answer is dimmed.
      expect(await dimmedIds(chat.page)).toEqual([first.id]);
      await chat.send('third');
      await chat.waitForAnswer('completed', { otherThan: second.id });
      const [prompt, answer, longPrompt, secondAnswer] = await chat.messages();
      expect(await dimmedIds(chat.page)).toEqual([answer!.id, longPrompt!.id]);
      expect(await chat.message(prompt!.id).getAttribute('class')).not.toContain('outside-model-view');
      expect(await chat.message(answer!.id).getAttribute('aria-label')).toBe('Assistant, not seen by the model');
      const rule = chat.page.locator('.context-rule');
      expect(await rule.textContent()).toBe(
        'The model did not see above this line, except the first message: 2 messages were left out of its latest answer to fit its context window.',
      );
      // The rule stands right above the first message read again: the second answer.
      const next = rule.locator('xpath=following-sibling::article[1]');
      expect(await next.getAttribute('data-node-id')).toBe(secondAnswer!.id);
      await screenshot(chat.page, 'context-window-fitted');
      // Dimmed, yet still readable: the muted colour keeps its contrast.
      expect(await axeViolations(chat.page)).toEqual([]);

      // An answer whose model read everything dims nothing: a new thread's first answer.
      const fittedThread = chat.threadId();
      await chat.page.getByRole('button', { name: '+ New thread' }).click();
      // Sent only once the new thread shows: typed before, the message would meet the old thread's view.
      await chat.page.waitForFunction((previous) => !location.hash.includes(previous), fittedThread);
      await chat.messageList.getByRole('heading', { name: 'Ask anything' }).waitFor();
      await chat.send('a new start');
      await chat.waitForAnswer('completed');
      expect(await dimmedIds(chat.page)).toEqual([]);
      expect(await chat.page.locator('.context-rule').count()).toBe(0);
    },
    BROWSER_TEST_MS,
  );
});

describe('a branch longer than the model reads, on a server that summarises', () => {
  it(
    'lets the person read the summary the model read in place of the messages above the rule',
    async () => {
      const harness = await WebHarness.start({
        models: [
          {
            id: 'main',
            provider: new DemoProvider({ delayMs: 0, words: 60 }),
            contextWindow: 430,
            reservedOutputTokens: 100,
            contextStrategy: 'summarize',
            summaryModel: 'summarizer',
          },
          { id: 'summarizer', provider: new DemoProvider({ delayMs: 0, words: 12 }) },
        ],
      });
      const chat = await harness.openChat(await harness.newContext(undefined, { bypassCSP: true }));
      await chat.send('first');
      const first = await chat.waitForAnswer('completed');
      // 274 tokens: with the first prompt, within the 297 left beside the 33 kept for a summary.
      await chat.send('lorem '.repeat(180).trim());
      const second = await chat.waitForAnswer('completed', { otherThan: first.id });
      expect(await dimmedIds(chat.page)).toEqual([first.id]);
      const summary = chat.page.locator('.context-rule details.context-summary');
      const answerNode = chat.frames.received
        .filter((frame) => frame.type === 'CPP_GRAPH_PATCH')
        .map((frame) => (frame.payload.nodes as Record<string, { context?: unknown }>)[second.id])
        .find((node) => node !== undefined);
      expect(answerNode?.context).toMatchObject({ omittedNodes: 1, summary: expect.any(String) });
      await summary.locator('summary').click();
      const text = await summary.locator('p').textContent();
      // What the summarising model wrote (the demo answers with its own text), as the answer records it.
      expect(text).toMatch(/^\(demo model, turn 1\)/);
      expect(await chat.message(second.id).getAttribute('data-status')).toBe('completed');
      await screenshot(chat.page, 'context-window-summary');
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});

function dimmedIds(page: Page): Promise<string[]> {
  return page
    .locator('article.message.outside-model-view')
    .evaluateAll((articles) => articles.map((article) => (article as HTMLElement).dataset.nodeId ?? ''));
}
