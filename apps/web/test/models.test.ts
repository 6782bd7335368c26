import { DemoProvider } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('models in the browser', () => {
  it(
    'offers a model picker when the server has several, sends, regenerates and edits with the one picked, and names the model on each answer',
    async () => {
      // What a server without a configured model offers (the CLI's demo): the demo model and its reasoning mode.
      const models = [
        { provider: new DemoProvider({ delayMs: 2 }), label: 'Demo' },
        // Slow enough to watch it think.
        { provider: new DemoProvider({ delayMs: 20, words: 30, reasoningWords: 40 }), label: 'Demo (reasoning)' },
      ];
      const harness = await WebHarness.start({ models });
      const chat = await harness.openChat();
      const picker = chat.page.getByRole('combobox', { name: 'Model' });
      await picker.waitFor();
      expect(await picker.locator('option').allTextContents()).toEqual(['Demo', 'Demo (reasoning)']);
      expect(await picker.inputValue()).toBe('cpp-demo');

      await chat.send('one');
      const first = await chat.waitForAnswer('completed');
      expect(chat.frames.lastSent('CPP_PROMPT')!.payload.model).toBe('cpp-demo');
      expect(await chat.message(first.id).locator('.message-model').textContent()).toBe(' · cpp-demo');

      await picker.selectOption({ label: 'Demo (reasoning)' });
      await chat.send('two');
      // While the model reasons, its reasoning shows open under "Thinking…"; once the answer starts it folds away.
      const thinking = chat.page.locator('details.reasoning[open]', { hasText: 'Thinking…' });
      await thinking.waitFor();
      await thinking.locator('.reasoning-text', { hasText: /^The question is about "two"\./ }).waitFor();
      await screenshot(chat.page, 'models-thinking');
      const second = await chat.waitForAnswer('completed', { otherThan: first.id });
      const reasoning = chat.message(second.id).locator('details.reasoning');
      expect(await reasoning.getAttribute('open')).toBeNull();
      expect(await reasoning.locator('summary').textContent()).toBe('Thought it through (40 words)');
      await reasoning.locator('summary').click();
      expect(await reasoning.getAttribute('open')).toBe('');
      // The reasoning is not part of the answer.
      expect(await chat.message(second.id).locator('.message-body').textContent()).not.toContain(
        'The question is about',
      );
      expect(chat.frames.lastSent('CPP_PROMPT')!.payload.model).toBe('demo-reasoning');
      expect(await chat.message(second.id).locator('.message-model').textContent()).toBe(' · demo-reasoning');
      await screenshot(chat.page, 'models-picked');

      // Regenerate asks the model picked now: the last answer again, by the reasoning model.
      await chat.action(second.id, 'Regenerate').click();
      const again = await chat.waitForAnswer('completed', { otherThan: second.id });
      expect(chat.frames.lastSent('CPP_REGENERATE')!.payload.model).toBe('demo-reasoning');
      expect(await chat.message(again.id).locator('.message-model').textContent()).toBe(' · demo-reasoning');

      // So does an edited prompt: its answer is the reasoning model's, not the server's default (cpp-demo).
      const prompt = (await chat.messages())[2]!;
      await chat.action(prompt.id, 'Edit').click();
      const editBox = chat.message(prompt.id).getByRole('textbox', { name: 'Edit message' });
      await editBox.fill('two, differently');
      await editBox.press('Enter');
      const edited = await chat.waitForAnswer('completed', { otherThan: again.id });
      expect(chat.frames.lastSent('CPP_PROMPT')!.payload).toMatchObject({
        userPrompt: 'two, differently',
        parentNodeId: first.id,
        model: 'demo-reasoning',
      });
      expect(await chat.message(edited.id).locator('.message-model').textContent()).toBe(' · demo-reasoning');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'pivots while the model reasons: the note says so, and the cut answer keeps the reasoning shown and no answer',
    async () => {
      // Thinks for two minutes: still thinking when the person pivots, however loaded the machine.
      const harness = await WebHarness.start({ model: new DemoProvider({ delayMs: 40, reasoningWords: 3_000 }) });
      const chat = await harness.openChat();
      await chat.send('Think about trees');
      const thinking = chat.page.locator('details.reasoning[open]', { hasText: 'Thinking…' });
      await thinking
        .locator('.reasoning-text', { hasText: /^The question is about "Think about trees"\. First/ })
        .waitFor();

      await chat.composer.fill('Rivers instead');
      await chat.page
        .getByText(/^Sending now pivots: the model stops thinking here, at the \d+ characters of reasoning on screen/)
        .waitFor();
      await chat.composer.press('Enter');

      const halted = await chat.frames.receivedFrame((frame) => frame.type === 'CPP_STREAM_HALTED');
      const interrupted = halted.payload as {
        interruptedNodeId: string;
        finalContentLength: number;
        finalReasoningLength: number;
        part?: string;
      };
      expect(interrupted).toMatchObject({ finalContentLength: 0, part: 'reasoning' });
      expect(interrupted.finalReasoningLength).toBeGreaterThan(0);
      expect(chat.frames.lastSent('CPP_PIVOT_INIT')!.payload).toMatchObject({ receivedContentLength: 0 });
      const cut = chat.message(interrupted.interruptedNodeId);
      // Folded away once the answer is no longer thinking, but there, as far as it was seen.
      await cut
        .locator('.reasoning-text')
        .filter({ hasText: /^The question is about/ })
        .waitFor({ state: 'attached' });
      await chat.page.waitForFunction(
        ([nodeId, length]) =>
          document.querySelector(`article[data-node-id="${nodeId}"] .reasoning-text`)?.textContent?.length === length,
        [interrupted.interruptedNodeId, interrupted.finalReasoningLength] as const,
      );
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows no picker when the server offers one model',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      // Once the server has said which models it has, there is still no picker.
      await chat.page.waitForFunction(() => document.readyState === 'complete');
      await chat.send('one');
      await chat.waitForAnswer('completed');
      expect(chat.frames.received.some((frame) => frame.type === 'CPP_MODELS')).toBe(true);
      expect(await chat.page.getByRole('combobox', { name: 'Model' }).count()).toBe(0);
      expect(chat.frames.lastSent('CPP_PROMPT')!.payload.model).toBe('cpp-demo');
    },
    BROWSER_TEST_MS,
  );
});
