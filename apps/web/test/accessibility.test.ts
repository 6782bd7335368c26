import { describe, expect, it } from 'vitest';
import { axeViolations } from './support/accessibility.js';
import { deltas, openAiReplay } from './support/openai-replay.js';
import { DESKTOP, PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 120_000;

const ANSWER = `### A table, code and math

| a | b |
| --- | --- |
| 1 | 2 |

\`\`\`js
const answer = 42;
\`\`\`

> quoted

- [x] done

$a^2 + b^2 = c^2$`;

const SCREENS = [
  { name: 'desktop', viewport: DESKTOP, colorScheme: 'light' },
  { name: 'desktop', viewport: DESKTOP, colorScheme: 'dark' },
  { name: 'phone', viewport: PHONE, colorScheme: 'light' },
  { name: 'phone', viewport: PHONE, colorScheme: 'dark' },
] as const;

describe('accessibility (axe-core, every impact, the page policy bypassed for axe) in the browser', () => {
  it.each(SCREENS)(
    'has no violations idle, streaming, while a pivot is typed and with the tree open: $name, $colorScheme',
    async ({ name, viewport, colorScheme }) => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat(await harness.newContext(viewport, { colorScheme, bypassCSP: true }));
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.send('Tell me about trees');
      await chat.waitForAnswer('streaming', { minLength: 40 });
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.composer.fill('Actually, tell me about rivers');
      await chat.page.getByText('Sending now pivots').waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);

      if (name === 'phone') await chat.page.getByRole('button', { name: 'Tree' }).click();
      await chat.page.getByRole('navigation', { name: 'Conversation tree' }).locator('.tree-node').first().waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      if (name === 'phone') await chat.page.keyboard.press('Escape');

      await chat.page.getByRole('button', { name: '■ Stop' }).click();
      await chat.waitForAnswer('interrupted');
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no violations answered with rich Markdown, with its actions shown, in error, and asking before a delete',
    async () => {
      const { model } = await openAiReplay(deltas(ANSWER), deltas('A second answer.'));
      const harness = await WebHarness.start({ model, limits: { maxPromptLength: 20 } });
      const chat = await harness.openChat(await harness.newContext(DESKTOP, { bypassCSP: true }));
      await chat.send('Show me everything');
      const answer = await chat.waitForAnswer('completed');
      await chat.message(answer.id).locator('.katex').waitFor();
      await chat.message(answer.id).locator('.hljs-keyword').first().waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);

      const [prompt] = await chat.messages();
      await chat.send('and again, differently');
      await chat.page.getByRole('alert').locator('.error').waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      await chat.message(prompt!.id).hover();
      await chat.action(answer.id, 'Regenerate').waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);

      // Both questions asked in place: a message's Delete and the thread's.
      await chat.action(answer.id, 'Delete').click();
      await chat.message(answer.id).getByRole('group', { name: 'Confirm deletion' }).waitFor();
      await chat.openThreadMenu();
      await chat.page.getByRole('button', { name: 'Delete thread' }).click();
      await chat.page
        .getByRole('navigation', { name: 'Threads' })
        .getByRole('group', { name: 'Confirm deletion' })
        .waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no violations in dark mode, with code, a table, an error and the question before a delete',
    async () => {
      const { model } = await openAiReplay(deltas(ANSWER));
      const harness = await WebHarness.start({ model, limits: { maxPromptLength: 20 } });
      const chat = await harness.openChat(await harness.newContext(DESKTOP, { colorScheme: 'dark', bypassCSP: true }));
      await chat.send('Show me everything');
      const answer = await chat.waitForAnswer('completed');
      await chat.message(answer.id).locator('.hljs-keyword').first().waitFor();
      await chat.send('and again, differently');
      await chat.page.getByRole('alert').locator('.error').waitFor();
      await screenshot(chat.page, 'dark-mode');
      expect(await axeViolations(chat.page)).toEqual([]);
      // The question before a delete, its Delete button red as in the light theme.
      await chat.action(answer.id, 'Delete').click();
      await chat.message(answer.id).getByRole('group', { name: 'Confirm deletion' }).waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no violations on a phone with the threads panel open',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(PHONE, { bypassCSP: true }));
      await chat.twoTurns();
      await chat.page.getByRole('button', { name: '☰ Threads', exact: true }).click();
      await chat.page.getByRole('navigation', { name: 'Threads' }).waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
